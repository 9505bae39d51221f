"""Tests that kill mutants mutmut found surviving in bootscope/stats/stratified.py (make mutation):
each asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats import stratified
from bootscope.stats.stratified import stratified_shift


def _one_pair(crossing: float) -> list[stratified._Stratum]:
    # control [0], canary [crossing]: U(d) = 1 for d < crossing, 1/2 at it, 0 beyond, so z(d) > 0
    # exactly while d < crossing. Variance of U for n = m = 1: 1 * 1 / 12 * (2 + 1) = 0.25.
    return [stratified._Stratum(np.array([0.0]), np.array([crossing]), 1.0, 0.25)]


def _cell_midpoint(low: float, crossing: float, width: float) -> float:
    # The bisection ends on the cell [low + j * width, low + (j + 1) * width] that holds the crossing
    # and answers its midpoint.
    j = math.floor((crossing - low) / width)
    return low + j * width + width / 2.0


def test_bisection_stops_at_tolerance_scaled_by_the_larger_end() -> None:
    # [0, 4]: tolerance 1e-9 * max(1, 0, 4) = 4e-9; 4 / 2**29 = 7.45e-9 > 4e-9 >= 4 / 2**30 = 3.73e-9,
    # so 30 halvings and a final cell of width 4 / 2**30.
    answer = stratified._solve(_one_pair(4.0 / 3.0), 0.0, 0.0, 4.0)
    assert answer == _cell_midpoint(0.0, 4.0 / 3.0, 4.0 / 2**30)


def test_bisection_stops_at_tolerance_scaled_by_a_larger_negative_low_end() -> None:
    # [-4, 0]: tolerance 1e-9 * max(1, 4, 0) = 4e-9: 30 halvings as above, cell width 4 / 2**30.
    answer = stratified._solve(_one_pair(-4.0 / 3.0), 0.0, -4.0, 0.0)
    assert answer == _cell_midpoint(-4.0, -4.0 / 3.0, 4.0 / 2**30)


def test_bisection_tolerance_is_never_below_one_unit_times_the_relative_tolerance() -> None:
    # [0, 0.5]: tolerance 1e-9 * max(1, 0, 0.5) = 1e-9; 0.5 / 2**28 = 1.86e-9 > 1e-9 >= 0.5 / 2**29
    # = 9.31e-10, so 29 halvings.
    answer = stratified._solve(_one_pair(1.0 / 6.0), 0.0, 0.0, 0.5)
    assert answer == _cell_midpoint(0.0, 1.0 / 6.0, 0.5 / 2**29)
    # [0, 1]: tolerance 1e-9; 1 / 2**29 = 1.86e-9 > 1e-9 >= 1 / 2**30 = 9.31e-10: 30 halvings.
    answer = stratified._solve(_one_pair(1.0 / 3.0), 0.0, 0.0, 1.0)
    assert answer == _cell_midpoint(0.0, 1.0 / 3.0, 1.0 / 2**30)


def test_bisection_does_not_halve_a_bracket_already_at_the_tolerance() -> None:
    # [0, 1e-9]: width 1e-9 equals the tolerance 1e-9 * 1: no halving, the midpoint 5e-10 comes back.
    assert stratified._solve(_one_pair(1.0), 0.0, 0.0, 1e-9) == 5e-10


def test_pooled_estimate_is_the_middle_of_a_flat_stretch_of_the_statistic() -> None:
    # control [0], canary [0, 2]: differences {0, 2}, median 1. U(d) - nm/2 is +1/2 at d = 0, 0 for
    # 0 < d < 2, -1/2 at d = 2: the estimate is the middle of (0, 2).
    result = stratified_shift({"a": ([0.0], [0.0, 2.0])}, 0.05)
    assert result.shift == pytest.approx(float(np.median([0.0, 2.0])), abs=1e-8)


def test_pooled_shift_z_and_p_of_three_single_pair_strata_by_hand() -> None:
    groups = {"a": ([0.0], [1.0]), "b": ([0.0], [2.0]), "c": ([0.0], [10.0])}
    result = stratified_shift(groups, 0.05)
    # Each stratum N = 2, weight 1/3, Var U = 0.25. At d = 0 every U = 1: centred sum 3 * (1/3) * 1/2
    # = 1/2; variance 3 * (1/9) * 0.25 = 1/12; z = (1/2) / sqrt(1/12) = sqrt(3).
    assert result.z == pytest.approx(math.sqrt(3.0), rel=1e-12)
    assert result.p_value == pytest.approx(2.0 * sps.norm.sf(math.sqrt(3.0)), rel=1e-12)
    # sum of (U_s - 1/2) is +1/2 on (1, 2), 0 at d = 2, -1/2 on (2, 10): the estimate is 2.
    assert result.shift == pytest.approx(2.0, abs=1e-8)
    # The extreme shift gives z = sqrt(3) = 1.73 < 1.96: no 95% interval.
    assert result.ci is None


def test_all_values_identical_gives_zero_shift_z_zero_and_p_one() -> None:
    groups = {"a": ([5.0], [5.0, 5.0]), "b": ([2.0, 2.0, 2.0], [2.0])}
    result = stratified_shift(groups, 0.05)
    # No spread: the variance is zero, z is taken as 0 and p = 2 * sf(0) = 1. The bracket is
    # [0 - 1, 0 + 1] (canary min - control max, canary max - control min, padded by 1): middle 0.
    assert result.z == 0.0
    assert result.p_value == 1.0
    assert result.shift == 0.0
    assert result.ci is None
    for stratum in result.strata:
        assert stratum.p_value == 1.0
        assert stratum.p_holm == 1.0


def test_per_stratum_fields_on_the_pairwise_path_with_holm() -> None:
    groups = {"a": ([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]), "b": ([2.0, 2.0, 2.0], [2.0])}
    result = stratified_shift(groups, 0.05)
    a, b = result.strata
    assert (a.stratum, a.n_control, a.n_canary) == ("a", 3, 3)
    assert (b.stratum, b.n_control, b.n_canary) == ("b", 3, 1)
    # canary - control: 3, 2, 1, 4, 3, 2, 5, 4, 3 -> sorted 1 2 2 3 3 3 4 4 5, median 3.
    assert a.shift == 3.0
    assert b.shift == 0.0
    assert a.method.startswith("exact")  # too few boots for a 95% exact interval
    # Complete separation, n = m = 3: 1 of C(6, 3) = 20 orderings, two-sided p = 2 / 20 = 0.1.
    assert a.p_value == pytest.approx(0.1, rel=1e-12)
    assert a.p_value == pytest.approx(sps.mannwhitneyu([4.0, 5.0, 6.0], [1.0, 2.0, 3.0]).pvalue, rel=1e-12)
    assert b.p_value == 1.0  # all values identical: no test, p = 1
    # Holm over m = 2: smallest 0.1 -> min(1, 2 * 0.1) = 0.2; then max(0.2, min(1, 1 * 1.0)) = 1.
    assert a.p_holm == pytest.approx(0.2, rel=1e-12)
    assert b.p_holm == 1.0


def test_holm_p_of_an_underflowed_p_is_zero_not_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(stratified, "MAX_PAIRWISE", 0)
    control = np.arange(1100, dtype=np.float64)
    canary = control + 5000.0
    # Complete separation, n = m = 1100, no ties: z = (nm/2) / sqrt(nm (N + 1) / 12)
    # = sqrt(3 * 1100**2 / 2201) = 40.6, and 2 * sf(40.6) underflows to 0.0.
    result = stratified_shift({"a": (control, canary)}, 0.05)
    stratum = result.strata[0]
    assert stratum.p_value == 0.0
    # Holm of a single p of 0 is 0: the smallest p there is, not a missing one (it was read as 1.0).
    assert stratum.p_holm == 0.0


def test_inverted_path_fields_by_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stratified, "MAX_PAIRWISE", 8)  # 3 * 3 = 9 pairs > 8: inversion
    result = stratified_shift({"s": ([1.0, 2.0, 3.0], [2.5, 4.0, 5.0])}, 0.05)
    stratum = result.strata[0]
    assert stratum.method == "normal approximation (inverted)"
    assert (stratum.stratum, stratum.n_control, stratum.n_canary) == ("s", 3, 3)
    # U at d = 0: 2.5 beats 2 controls, 4 and 5 beat 3 each: U = 8, nm/2 = 4.5, centred 3.5;
    # Var U = 9 / 12 * 7 = 5.25; z = 3.5 / sqrt(5.25) = 1.5275.
    expected_p = 2.0 * sps.norm.sf(3.5 / math.sqrt(5.25))
    assert stratum.p_value == pytest.approx(expected_p, rel=1e-12)
    assert stratum.p_holm == pytest.approx(expected_p, rel=1e-12)
    # differences -0.5 0.5 1 1.5 2 2 3 3 4: U(d) drops below 4.5 at d = 2 -> estimate 2.
    assert stratum.shift == pytest.approx(2.0, abs=1e-8)


def test_exactly_max_pairwise_pairs_stay_on_the_pairwise_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stratified, "MAX_PAIRWISE", 9)  # 3 * 3 = 9 pairs: not beyond the limit
    result = stratified_shift({"s": ([1.0, 2.0, 3.0], [2.5, 4.0, 5.0])}, 0.05)
    assert result.strata[0].method.startswith("exact")


def test_nan_in_control_names_the_control_side() -> None:
    with pytest.raises(StatsError, match=r"^side control holds a NaN"):
        stratified_shift({"a": ([1.0, float("nan")], [1.0])}, 0.05)


def test_nan_in_canary_names_the_canary_side() -> None:
    with pytest.raises(StatsError, match=r"^side canary holds a NaN"):
        stratified_shift({"a": ([1.0], [float("inf"), 2.0])}, 0.05)


def test_no_stratum_with_both_cohorts_message_is_exact() -> None:
    with pytest.raises(StatsError, match=r"^no stratum holds boots of both cohorts$"):
        stratified_shift({"a": ([1.0], []), "b": ([], [2.0])}, 0.05)

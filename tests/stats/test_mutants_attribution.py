"""Tests that kill mutants mutmut found surviving in bootscope/stats/attribution.py
(make mutation): each asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats.attribution import (
    APPEARED,
    COMPARED,
    DISAPPEARED,
    SHARE_OF_MOVES,
    SHARE_OF_TOTAL,
    TOO_FEW,
    ComponentSamples,
    ComponentShift,
    attribute,
    presence_p,
)

TOTAL_A = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5]
TOTAL_B = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5]


def _one(item: ComponentSamples, alpha: float = 0.05, fdr: float = 0.05) -> ComponentShift:
    result = attribute(TOTAL_A, TOTAL_B, [item], metric="kernel_init_s", alpha=alpha, fdr=fdr)
    (shift,) = result.components + result.too_few
    return shift


def _exact_two_sided_p(a: list[float], b: list[float]) -> float:
    """Mann-Whitney two-sided p-value given the ties: every split of the pooled values, by scipy."""

    def u_of_first(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
        return np.asarray(sps.mannwhitneyu(x, y, axis=axis).statistic)

    return float(
        sps.permutation_test(
            (b, a), u_of_first, permutation_type="independent", n_resamples=np.inf, vectorized=True
        ).pvalue
    )


def test_share_returns_the_share_of_the_basis_asked_for() -> None:
    shift = ComponentShift(
        "phase", "setup", 6, 0.2, 6, 0.3, 0.1, (0.05, 0.15), 0.01, 0.01, 0.25, COMPARED, True,
        share_of_moves=0.4,
    )  # fmt: skip
    assert shift.share(SHARE_OF_TOTAL) == 0.25
    assert shift.share(SHARE_OF_MOVES) == 0.4


def test_an_appeared_component_has_no_median_and_no_boots_on_the_side_without_it() -> None:
    shift = _one(ComponentSamples("gap", "new line", (), (0.05, 0.07), 6, 6))
    assert shift.status == APPEARED
    assert shift.n_a == 0 and shift.median_a_s is None
    # b's median: (0.05 + 0.07) / 2 = 0.06 s, all of it the shift.
    assert shift.n_b == 2 and shift.median_b_s == pytest.approx(0.06)
    assert shift.shift_s == pytest.approx(0.06)


def test_a_component_with_too_few_boots_counts_them_and_is_not_moved() -> None:
    shift = _one(ComponentSamples("cpu", "cpu3", (0.1,), (0.1, 0.2), 6, 6))
    assert shift.status == TOO_FEW
    assert shift.moved is False
    assert (shift.n_a, shift.n_b) == (1, 2)
    # Medians: 0.1 alone; (0.1 + 0.2) / 2 = 0.15.
    assert shift.median_a_s == pytest.approx(0.1) and shift.median_b_s == pytest.approx(0.15)


def test_a_disappeared_component_of_zero_seconds_moved_by_zero() -> None:
    shift = _one(ComponentSamples("gap", "empty line", (0.0, 0.0, 0.0), (), 6, 6))
    assert shift.status == DISAPPEARED
    # All of its time: minus a's median, -(0.0) = 0 s, not a second.
    assert shift.shift_s == 0.0


@pytest.mark.parametrize(("boots_a", "boots_b"), [(None, 5), (10, None)])
def test_presence_p_is_none_when_either_side_boot_count_is_unknown(
    boots_a: int | None, boots_b: int | None
) -> None:
    assert presence_p(ComponentSamples("gap", "line", (0.1,), (0.1, 0.2), boots_a, boots_b)) is None


def test_presence_p_when_every_boot_of_b_has_the_component() -> None:
    # 0 of 10 boots of a, 5 of 5 of b: table [[0, 10], [5, 0]]. Given 5 haves among 15 boots, the
    # count x on a's side has P(x) = C(10, x) C(5, 5 - x) / C(15, 5): 1, 50, 450, 1200, 1050, 252
    # over 3003; only x = 0 is as unlikely as the observed table, so p = 1 / 3003.
    item = ComponentSamples("gap", "new line", (), (0.1, 0.1, 0.2, 0.2, 0.3), 10, 5)
    assert presence_p(item) == pytest.approx(1 / 3003, rel=1e-9)
    assert presence_p(item) == pytest.approx(sps.fisher_exact([[0, 10], [5, 0]]).pvalue, rel=1e-9)


def test_a_compared_component_with_unequal_boot_counts_reports_counts_medians_and_p() -> None:
    a, b = [1.0, 2.0, 4.0], [3.0, 5.0, 6.0, 10.0]
    shift = _one(ComponentSamples("phase", "setup", tuple(a), tuple(b), 6, 6))
    assert shift.status == COMPARED
    assert (shift.n_a, shift.n_b) == (3, 4)
    # Medians: 2.0 of (1, 2, 4); (5 + 6) / 2 = 5.5 of (3, 5, 6, 10).
    assert shift.median_a_s == 2.0 and shift.median_b_s == 5.5
    assert shift.p == pytest.approx(sps.mannwhitneyu(b, a, method="exact").pvalue, rel=1e-9)


def test_a_constant_side_facing_a_varying_one_still_gets_a_p_value() -> None:
    a, b = [1.0, 1.0, 1.0], [2.0, 3.0, 4.0]
    shift = _one(ComponentSamples("phase", "setup", tuple(a), tuple(b), 6, 6))
    # b above all of a: U = 9 of 9; given the ties, 2 of the C(6, 3) = 20 splits are as extreme.
    assert shift.p == pytest.approx(_exact_two_sided_p(a, b), rel=1e-9)
    assert shift.p == pytest.approx(2 / 20, rel=1e-9)


@pytest.mark.parametrize("side", ["a", "b"])
@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_a_nan_or_infinite_value_on_one_side_only_raises(side: str, bad: float) -> None:
    clean, dirty = (1.0, 2.0, 3.0), (1.0, bad, 2.0)
    a, b = (dirty, clean) if side == "a" else (clean, dirty)
    with pytest.raises(StatsError, match="NaN or infinite"):
        attribute(TOTAL_A, TOTAL_B, [ComponentSamples("phase", "setup", a, b, 6, 6)], metric="kernel_init_s")


@pytest.mark.parametrize("side", ["a", "b"])
def test_a_missing_value_is_refused_as_not_a_number(side: str) -> None:
    # None in a float64 array is NaN: the same StatsError as a NaN, not a TypeError from numpy.
    clean, dirty = (1.0, 2.0, 3.0), (1.0, None, 2.0)
    a, b = (dirty, clean) if side == "a" else (clean, dirty)
    item = ComponentSamples("phase", "setup", a, b, 6, 6)  # type: ignore[arg-type]
    with pytest.raises(StatsError, match="NaN or infinite"):
        attribute(TOTAL_A, TOTAL_B, [item], metric="kernel_init_s")


# An interval that ends exactly at zero (zero differences of tied values) takes the side the test
# points to: U of b below or above n*m/2. Each case has that interval end, a p (= q, one component)
# below the false discovery rate, and U of b off n*m/2 (worked out by hand: a tie counts 1/2), so
# the component moved. Each U is placed where one misplaced constant in U or in n*m/2 would land
# exactly on the middle, and call the component unmoved.
DIRECTION_CASES = [
    # U = 0 + 2 * (1 + 1/2) = 3 < 15 = 10 * 3 / 2 (and 3 + 3 * 4 = 15).
    ([0, 1, 2, 2, 2, 2, 2, 3, 3, 3], [-1, 1, 1], 0.05, 3.0),
    # U = 2 * (11 + 3/2) + 14 = 39 > 21 = 14 * 3 / 2 (and 39 - 1.5 * 3 * 4 = 21).
    ([0] * 8 + [1] * 3 + [2] * 3, [2, 2, 3], 0.05, 39.0),
    # U = 2 * 1/2 + 1 + 3 * 1 = 5 < 15 = 3 * 10 / 2 (and 5 + 10 = 15).
    ([0, 3, 3], [-1, -1, -1, -1, 0, 0, 1, 2, 2, 2], 0.1, 5.0),
    # U = 4 * 1 + 12 * 3/2 + 4 * 2 = 30 > 20 = 2 * 20 / 2 (and 30 - 20 / 2 = 20).
    ([0, 2], [1] * 4 + [2] * 12 + [3] * 4, 0.2, 30.0),
    # U = 3 * (2 * 1/2) = 3 < 18 = 4 * 9 / 2 (and 3 + 9 * 10 / 6 = 18).
    ([0, 0, 1, 2], [-2, -2, -2, -1, -1, -1, 0, 0, 0], 0.05, 3.0),
    # U = 0 + (1 + 2 * 1/2) = 2 < 8 = 8 * 2 / 2 (and 2 = 8 / 2 / 2).
    ([0, 1, 1, 2, 2, 2, 3, 3], [-1, 1], 0.2, 2.0),
    # U = 2 * (6 * 1/2) + 6 = 12 < 18 = 6 * 6 / 2 (and 12 = 6 * 6 / 3).
    ([0] * 6, [-1, -1, -1, 0, 0, 1], 0.2, 12.0),
]


@pytest.mark.parametrize(("a_values", "b_values", "level", "u_of_b"), DIRECTION_CASES)
def test_an_interval_ending_at_zero_moves_the_way_the_test_points(
    a_values: list[int], b_values: list[int], level: float, u_of_b: float
) -> None:
    a, b = [float(x) for x in a_values], [float(x) for x in b_values]
    assert sps.mannwhitneyu(b, a).statistic == u_of_b
    assert u_of_b != len(a) * len(b) / 2
    expected_p = _exact_two_sided_p(a, b)
    assert expected_p < level
    shift = _one(ComponentSamples("phase", "setup", tuple(a), tuple(b)), alpha=level, fdr=level)
    assert shift.shift_ci_s is not None and 0.0 in shift.shift_ci_s  # the case's premise
    assert shift.p == pytest.approx(expected_p, rel=1e-9)
    assert shift.q == pytest.approx(expected_p, rel=1e-9)
    assert shift.moved is True

"""Tests that kill mutants mutmut found surviving in bootscope/stats/changepoint.py
(make mutation): each asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pytest
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats.changepoint import detect_change_points, split_statistics

# Distinct offsets inside a group, so that only the group levels decide the ranks.
OFFSETS = np.arange(5) * 0.01


def _groups(levels: list[float]) -> list[np.ndarray]:
    return [level + OFFSETS for level in levels]


def test_empty_position_error_names_the_position() -> None:
    with pytest.raises(StatsError, match=r"position 1 of the series has no samples"):
        detect_change_points([[1.0, 2.0], [], [3.0]])


def test_non_finite_value_error_names_the_position() -> None:
    message = r"position 1 of the series holds a value that is not a finite number"
    with pytest.raises(StatsError, match=message):
        detect_change_points([[1.0, 2.0], [3.0, float("inf")]])


def test_single_sample_positions_are_accepted() -> None:
    # Two positions of one sample each: |z| = sqrt(3 * 1 * 1 / 3) = 1 at the only boundary, and every
    # permutation gives |z| = 1 too, so p = (99 + 1) / (99 + 1) = 1: no change point, one test.
    result = detect_change_points([[1.0], [2.0]], permutations=99)
    assert result.change_points == ()
    assert result.tests == 1


def test_split_statistics_accepts_two_positions() -> None:
    # before {1, 2}, after {3, 4}: U_after = 4, mean n1*n2/2 = 2, sd = sqrt(2*2*5/12) = sqrt(5/3).
    z = split_statistics([np.array([1.0, 2.0]), np.array([3.0, 4.0])])
    assert z.shape == (1,)
    assert z[0] == pytest.approx(2.0 / math.sqrt(5.0 / 3.0))


def test_decimal_samples_are_read_as_numbers() -> None:
    before = [Decimal(str(v)) for v in (1.0, 1.1, 1.2, 1.3, 1.4)]
    after = [Decimal(str(v)) for v in (2.0, 2.1, 2.2, 2.3, 2.4)]
    result = detect_change_points([before, after], seed=0)
    assert [c.index for c in result.change_points] == [0]
    # Each after value exceeds each before value by 0.6 .. 1.4, symmetric about 1.0: median 1.0.
    assert result.change_points[0].shift == pytest.approx(1.0)


@pytest.mark.parametrize("alpha", [0.0, 1.0, 1.5])
def test_alpha_outside_open_unit_interval_raises(alpha: float) -> None:
    with pytest.raises(StatsError, match=r"alpha must be between 0 and 1"):
        detect_change_points([[1.0, 2.0], [3.0, 4.0]], alpha=alpha)


def test_fewer_permutations_than_99_raise() -> None:
    with pytest.raises(StatsError, match=r"at least 99 permutations, got 98"):
        detect_change_points([[1.0, 2.0], [3.0, 4.0]], permutations=98)


def test_one_position_error_message_is_exact() -> None:
    with pytest.raises(StatsError) as info:
        detect_change_points([[1.0, 2.0, 3.0]])
    assert str(info.value) == "a change point needs at least two positions in the series"


def test_separated_pair_reports_every_field_at_99_permutations() -> None:
    before = 1.0 + 0.05 * np.arange(20)
    after = 10.0 + 0.05 * np.arange(20)
    # alpha = 0.01 and 99 permutations: a full separation of 20 against 20 has exact two-sided p
    # 2 / C(40, 20) ~ 1.4e-11, so no permutation reaches it and p = (0 + 1) / (99 + 1) = 0.01, which
    # is not > alpha: the change point is reported (an exact tie with alpha still rejects).
    result = detect_change_points([before, after], alpha=0.01, permutations=99)
    assert result.alpha == 0.01
    assert result.permutations == 99
    assert result.seed == 0  # the default seed
    assert "Pettitt" in result.method and "binary segmentation" in result.method
    assert result.tests == 1
    assert len(result.change_points) == 1
    change = result.change_points[0]
    assert change.index == 0
    assert change.p == 0.01
    assert change.p_adjusted == 0.01
    # Full separation: U = n1*n2 = 400, z = (400 - 200) / sqrt(400 * 41 / 12) = sqrt(3 * 400 / 41).
    assert change.statistic == pytest.approx(math.sqrt(1200.0 / 41.0))
    u_after = sps.mannwhitneyu(after, before).statistic
    assert change.statistic == pytest.approx((u_after - 200.0) / math.sqrt(400.0 * 41.0 / 12.0))
    assert change.segment == (0, 2)
    assert change.n_before == 20 and change.n_after == 20
    shift = float(np.median(np.subtract.outer(after, before)))
    assert change.shift == pytest.approx(shift)
    assert change.shift_relative == pytest.approx(shift / float(np.median(before)))


def test_permutation_p_value_matches_exact_mann_whitney() -> None:
    # 5 against 5, fully separated: exact two-sided p = 2 / C(10, 5) = 2 / 252 ~ 0.0079 (scipy agrees).
    before = [0.5, 0.75, 1.0, 1.25, 1.5]
    after = [3.0, 4.0, 5.0, 6.0, 7.0]
    exact = sps.mannwhitneyu(after, before, method="exact").pvalue
    assert exact == pytest.approx(2 / 252)
    result = detect_change_points([before, after], permutations=2000, seed=0)
    change = result.change_points[0]
    # 2000 permutations: sd of the estimate sqrt(0.0079 * 0.992 / 2000) ~ 0.002.
    assert change.p == pytest.approx(exact, abs=0.005)
    # before median 1.0; after - before = 4 + (u - v), u in {-2..2}, v in {-0.5..0.5}: median 4.
    assert change.shift == pytest.approx(4.0)
    assert change.shift_relative == pytest.approx(4.0)


def test_zero_before_median_gives_no_relative_shift() -> None:
    before = [-0.2, -0.1, 0.0, 0.1, 0.2]
    after = [3.0, 4.0, 5.0, 6.0, 7.0]
    result = detect_change_points([before, after], seed=0)
    change = result.change_points[0]
    # after - before = 5 + (u - v), both symmetric about 0: median 5; before median is 0.
    assert change.shift == pytest.approx(5.0)
    assert change.shift_relative is None


def test_step_right_after_an_isolated_first_position_is_found() -> None:
    # Levels 100 | 0 | 10 10 10: the first split isolates position 0 (|z| = sqrt(3*5*20/26) = 3.40, the
    # other boundaries are 0), leaving the one-position segment (0, 1) first in the queue and then
    # (1, 5), whose step 0 | 10 is at its very first boundary, index 1.
    result = detect_change_points(_groups([100, 0, 10, 10, 10]), seed=0)
    assert [c.index for c in result.change_points] == [0, 1]
    assert [c.segment for c in result.change_points] == [(0, 5), (1, 5)]


def test_step_right_before_the_first_split_is_found() -> None:
    # Mirror image, levels 10 10 10 | 0 | 100: first split at index 3, the left segment (0, 4) has its
    # step at its last boundary, index 2.
    result = detect_change_points(_groups([10, 10, 10, 0, 100]), seed=0)
    assert [c.index for c in result.change_points] == [2, 3]
    assert [c.segment for c in result.change_points] == [(0, 4), (0, 5)]


def test_flat_segment_does_not_stop_the_search() -> None:
    # Levels 100 100 | 0 0 | 10 10: first split at index 1 (10 against 20, fully separated); the flat
    # segment (0, 2) is tested (and rejects nothing) before (2, 6), whose step is at index 3.
    result = detect_change_points(_groups([100, 100, 0, 0, 10, 10]), seed=0)
    assert [c.index for c in result.change_points] == [1, 3]


def test_max_change_points_caps_the_count() -> None:
    # Same two-step series as above: with a cap of one, only the first split (index 0) is kept.
    result = detect_change_points(_groups([100, 0, 10, 10, 10]), seed=0, max_change_points=1)
    assert [c.index for c in result.change_points] == [0]

"""Tests that kill mutants mutmut found surviving in bootscope/stats/batch.py (make mutation): each
asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

import itertools

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from bootscope.stats.batch import FASTER, SAME, SLOWER, verdict_rows

FloatArray = npt.NDArray[np.float64]

# 101 values a side: 101 * 101 = 10 201 pairs, above the 10 000 beyond which the direction of a
# significant row is the sign of median(b) - median(a), with no interval.
_SPREAD = np.linspace(0.0, 0.9, 101)
_LOW_51 = np.linspace(0.0, 0.4, 51)
_LOW_50 = np.linspace(0.0, 0.4, 50)


def _row(values: FloatArray) -> FloatArray:
    return np.asarray(values, dtype=np.float64)[None, :]


def _enumerated_u_of_b(a: FloatArray, b: FloatArray) -> FloatArray:
    """U of b (ties one half) for every way of choosing which pooled values form a: the exact null
    distribution conditional on the tie pattern, every choice equally likely."""
    pooled = np.concatenate([a, b])
    values = []
    for chosen in itertools.combinations(range(pooled.size), a.size):
        in_a = np.zeros(pooled.size, dtype=bool)
        in_a[list(chosen)] = True
        side_a, side_b = pooled[in_a], pooled[~in_a]
        values.append(np.sum(side_b[:, None] > side_a) + 0.5 * np.sum(side_b[:, None] == side_a))
    return np.asarray(values, dtype=np.float64)


def test_large_rows_take_each_rows_own_median_direction_and_return_integers() -> None:
    # Three rows, each shifted by 10 with a 0.9 spread: every p is astronomically small, so the verdict
    # is the sign of median(b) - median(a) row by row: +10, +10, -10.
    a = np.stack([_SPREAD, 100.0 + _SPREAD, 50.0 + _SPREAD])
    b = np.stack([10.0 + _SPREAD, 110.0 + _SPREAD, 40.0 + _SPREAD])
    p = sps.mannwhitneyu(b, a, method="asymptotic", axis=1).pvalue
    assert np.all(p < 1e-30)
    result = verdict_rows(a, b, 0.05)
    assert result.tolist() == [SLOWER, SLOWER, FASTER]
    assert result.dtype == np.int64


def _discordant() -> tuple[FloatArray, FloatArray]:
    # a: 51 values in [10, 10.4] and 50 in [20, 20.4], median 10.4 (the 51st).
    # b: 50 values in [0, 0.4] and 51 in [11, 11.4], median 11.0 (the 51st).
    # Only b's upper 51 beat a's lower 51: U of b = 51 * 51 = 2601, far below 101 * 101 / 2 = 5100.5,
    # yet median(b) - median(a) = +0.6.
    a = np.concatenate([10.0 + _LOW_51, 20.0 + _LOW_50])
    b = np.concatenate([_LOW_50, 11.0 + _LOW_51])
    return a, b


def test_large_rows_less_needs_a_negative_median_difference() -> None:
    a, b = _discordant()
    assert sps.mannwhitneyu(b, a).statistic == 2601
    assert sps.mannwhitneyu(b, a, alternative="less", method="asymptotic").pvalue < 1e-6
    assert np.median(b) - np.median(a) > 0
    assert verdict_rows(_row(a), _row(b), 0.05, "less").tolist() == [SAME]


def test_large_rows_two_sided_direction_is_the_median_difference_not_the_interval() -> None:
    a, b = _discordant()
    # p < 0.05 and median(b) > median(a): SLOWER, although U of b (and the Hodges-Lehmann shift) point
    # the other way.
    assert sps.mannwhitneyu(b, a, method="asymptotic").pvalue < 1e-6
    assert verdict_rows(_row(a), _row(b), 0.05).tolist() == [SLOWER]


def test_large_rows_greater_needs_a_positive_median_difference() -> None:
    b, a = _discordant()  # swapped: U of b = 10201 - 2601 = 7600, median(b) - median(a) = -0.6
    assert sps.mannwhitneyu(b, a).statistic == 7600
    assert sps.mannwhitneyu(b, a, alternative="greater", method="asymptotic").pvalue < 1e-6
    assert np.median(b) - np.median(a) < 0
    assert verdict_rows(_row(a), _row(b), 0.05, "greater").tolist() == [SAME]


def test_large_rows_equal_medians_count_as_slower() -> None:
    # Both medians are exactly 10 (the middle value of 101). U of b = 50 * 50 (b's 5s over a's 0s)
    # + 50 + 0.5 (b's 10 over a's 0s, tie with a's 10) + 50 * 101 (b's 30s over all) = 7600.5.
    a = np.concatenate([_LOW_50, [10.0], 20.0 + _LOW_50])
    b = np.concatenate([5.0 + _LOW_50, [10.0], 30.0 + _LOW_50])
    assert np.median(a) == np.median(b) == 10.0
    assert sps.mannwhitneyu(b, a).statistic == 7600.5
    assert sps.mannwhitneyu(b, a, method="asymptotic").pvalue < 1e-6
    # direction 0 is not < 0: SLOWER.
    assert verdict_rows(_row(a), _row(b), 0.05).tolist() == [SLOWER]


def test_large_rows_p_equal_to_alpha_is_not_significant() -> None:
    a = _row(_SPREAD * 100.0)
    b = _row(_SPREAD * 100.0 + 9.0)
    p = float(sps.mannwhitneyu(b, a, method="asymptotic", axis=1).pvalue[0])
    assert 0.001 < p < 0.2
    assert verdict_rows(a, b, p).tolist() == [SAME]
    assert verdict_rows(a, b, float(np.nextafter(p, 1.0))).tolist() == [SLOWER]


def test_one_sided_verdict_uses_the_one_sided_p_and_a_two_alpha_interval() -> None:
    # n = m = 5, no ties: U of b = 4 (only 4.5 beats 1, 2, 3, 4). Null counts of U = 0..4 among the
    # C(10, 5) = 252 splits: 1, 1, 2, 3, 5, so P(U <= 4) = 12/252 = 0.0476 < 0.05 (two-sided 0.095).
    a = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    b = np.array([0.1, 0.2, 0.3, 0.4, 4.5])
    assert sps.mannwhitneyu(b, a, alternative="less", method="exact").pvalue == 12 / 252
    # The 90% interval (alpha / 2 = 0.05 a tail) takes k = 5 (P(U <= 4) <= 0.05): its upper end is the
    # 21st of the 25 sorted differences b - a, and 21 of them are negative: FASTER. At 95% k = 3
    # (P(U <= 2) = 4/252 <= 0.025 < P(U <= 3) = 7/252), the 23rd difference, positive: SAME.
    differences = np.sort((b[:, None] - a[None, :]).ravel())
    assert differences[20] < 0 < differences[22]
    assert verdict_rows(_row(a), _row(b), 0.05, "less").tolist() == [FASTER]


def _gap_rows() -> tuple[FloatArray, FloatArray]:
    # a = 0..50; 51 distinct b values chosen so that exactly 1007 of the 2601 differences b - a are
    # negative (U of a = 1007, U of b = 1594).
    a = np.arange(51.0)
    per_b = [1007 // 51 + (1 if j < 1007 % 51 else 0) for j in range(51)]  # how many a exceed b_j
    b = np.array([50 - count + 0.5 + j * 0.001 for j, count in enumerate(per_b)])
    return a, b


def test_normal_interval_that_contains_zero_vetoes_a_p_below_alpha() -> None:
    a, b = _gap_rows()
    differences = np.sort((b[:, None] - a[None, :]).ravel())
    assert np.sum(differences < 0) == 1007
    # scipy's continuity-corrected p: (1594 - 1300.5 - 0.5) / sqrt(51 * 51 * 103 / 12) = 1.9610: p < 0.05.
    assert sps.mannwhitneyu(b, a, method="asymptotic").pvalue < 0.05
    # Normal-approximation Hodges-Lehmann interval (51 > 50 values: no exact table):
    # k = floor(2601 / 2 - z * sqrt(2601 * 103 / 12)) = floor(1300.5 - 292.85) = 1007; the lower end is
    # the 1007th smallest difference, still negative, so the 95% interval contains 0: SAME. (At 90%,
    # z = 1.645 gives k = 1054, a positive lower end.)
    z95 = float(sps.norm.ppf(0.975))
    k95 = int(np.floor(2601 / 2 - z95 * np.sqrt(2601 * 103 / 12)))
    assert k95 == 1007
    assert differences[k95 - 1] < 0 < differences[1054 - 1]
    assert verdict_rows(_row(a), _row(b), 0.05).tolist() == [SAME]


def test_one_sided_normal_interval_at_two_alpha_that_contains_zero_vetoes() -> None:
    a, b = _gap_rows()
    # greater at alpha 0.025: the one-sided p is half the two-sided one, < 0.025; the interval is at
    # 2 * 0.025 = 0.05, the same 95% interval as above, which contains 0: SAME (at 3 * alpha, z = 1.78
    # would give k = 1034 and a positive lower end).
    assert sps.mannwhitneyu(b, a, alternative="greater", method="asymptotic").pvalue < 0.025
    assert verdict_rows(_row(a), _row(b), 0.025, "greater").tolist() == [SAME]


def test_one_sided_normal_rows_with_a_clear_shift_are_called() -> None:
    a = np.arange(51.0)
    b = a + 20.5  # 51 > 50 values, no ties: normal approximation
    assert sps.mannwhitneyu(b, a, alternative="greater", method="asymptotic").pvalue < 1e-6
    # The 90% normal interval: k = floor(1300.5 - 1.645 * 149.4) = 1054; the 1054th smallest
    # difference is positive (b_j = j + 20.5 is below a_i for i = j + 21 .. 50: 30 + 29 + ... + 1 = 465
    # negative differences).
    differences = np.sort((b[:, None] - a[None, :]).ravel())
    assert np.sum(differences < 0) == 465
    assert differences[1054 - 1] > 0
    assert verdict_rows(_row(a), _row(b), 0.05, "greater").tolist() == [SLOWER]


def test_interval_ending_at_zero_takes_the_side_of_u_of_b_below_half() -> None:
    # Tied values, 28 in all: exact conditional distribution, enumerated over the C(28, 2) = 378 ways
    # of placing a's two values. U of b = 6 (b's 1s over a's 0) + 12 / 2 (b's 0s tie a's 0) = 12, below
    # n * m / 2 = 26 (but within m = 26 of it).
    a = np.array([0.0, 2.0])
    b = np.array([-1.0] * 8 + [0.0] * 12 + [1.0] * 6)
    u_of_b = float(sps.mannwhitneyu(b, a).statistic)
    assert u_of_b == 12.0
    null = _enumerated_u_of_b(a, b)
    assert float(np.mean(null <= u_of_b)) < 0.1  # 34/378 = 0.0899
    # Upper end of the one-sided interval (level 2 * 0.1, so 0.1 in the upper tail):
    # D_(nm - k + 1) with k the largest k where P(U of b <= k - 1) <= 0.1.
    k_high = max(k for k in range(1, 53) if np.mean(null <= k - 1) <= 0.1)
    differences = np.sort((b[:, None] - a[None, :]).ravel())
    assert differences[52 - k_high] == 0.0
    # An interval ending exactly at 0 takes the test's side, U of b below n * m / 2: FASTER.
    assert verdict_rows(_row(a), _row(b), 0.1, "less").tolist() == [FASTER]


def test_interval_ending_at_zero_takes_the_side_of_u_of_b_above_half() -> None:
    # 30 values, C(30, 2) = 435 placements of a. U of b = 7 + 14 + 7 (b's 1, 2, 3 over a's 0)
    # + 7 (b's 3s over a's 2) + 14 / 2 (b's 2s tie a's 2) = 42, above n * m / 2 = 28 by 14 = m / 2.
    a = np.array([0.0, 2.0])
    b = np.array([1.0] * 7 + [2.0] * 14 + [3.0] * 7)
    u_of_b = float(sps.mannwhitneyu(b, a).statistic)
    assert u_of_b == 42.0
    null = _enumerated_u_of_b(a, b)
    assert float(np.mean(null >= u_of_b)) < 0.1  # 43/435 = 0.0989
    # Lower end: D_(k) with k the largest k where P(U of a <= k - 1) <= 0.1, U of a = 56 - U of b.
    k_low = max(k for k in range(1, 57) if np.mean(56 - null <= k - 1) <= 0.1)
    differences = np.sort((b[:, None] - a[None, :]).ravel())
    assert differences[k_low - 1] == 0.0
    assert verdict_rows(_row(a), _row(b), 0.1, "greater").tolist() == [SLOWER]

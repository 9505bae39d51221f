"""Tests that kill mutants mutmut found surviving in bootscope/stats/batch.py (make mutation): each
asserts a value computed by hand or by scipy, not by the code under test.

This file covers ``shift_ci_rows``, the Hodges-Lehmann shift and interval of many rows at once.
"""

from __future__ import annotations

import warnings

import numpy as np
import numpy.typing as npt
import pytest
from scipy import stats as sps

from bootscope.stats import batch
from bootscope.stats.batch import shift_ci_rows

FloatArray = npt.NDArray[np.float64]

# n = m = 3, no ties: the 9 differences b - a are 10 9 7 / 14 13 11 / 30 29 27, sorted
# D = 7 9 10 11 13 14 27 29 30, median D_5 = 13.
_A3 = np.array([0.0, 1.0, 3.0])
_B3 = np.array([10.0, 14.0, 30.0])


def _rows(values: FloatArray) -> FloatArray:
    return np.asarray(values, dtype=np.float64)[None, :]


def _sorted_differences(a: FloatArray, b: FloatArray) -> FloatArray:
    return np.sort(np.array([bj - ai for bj in b for ai in a]))


def _normal_interval(a: FloatArray, b: FloatArray, alpha: float) -> tuple[float, float, float]:
    """(median, D_k, D_(nm - k + 1)) with k = floor(nm / 2 - z * sd), sd the tie-corrected
    Mann-Whitney spread sqrt(nm / 12 * (N + 1 - sum(t^3 - t) / (N (N - 1))))."""
    n, m = a.size, b.size
    pooled_n = n + m
    _, groups = np.unique(np.concatenate([a, b]), return_counts=True)
    tie_sum = float(np.sum(groups.astype(np.float64) ** 3 - groups))
    sd = np.sqrt(n * m / 12.0 * (pooled_n + 1 - tie_sum / (pooled_n * (pooled_n - 1))))
    k = int(np.floor(n * m / 2.0 - float(sps.norm.ppf(1.0 - alpha / 2)) * sd))
    assert 1 <= k <= n * m
    diffs = _sorted_differences(a, b)
    return float(np.median(diffs)), float(diffs[k - 1]), float(diffs[n * m - k])


def _as_floats(result: tuple[FloatArray, FloatArray, FloatArray]) -> list[list[float]]:
    return [[float(v) for v in part] for part in result]


def test_exact_interval_takes_k_where_the_null_cdf_reaches_half_alpha() -> None:
    # n = m = 3: of the C(6, 3) = 20 splits, U = 0 and U = 1 occur once each, so P(U <= 0) = 1/20 = 0.05
    # and P(U <= 1) = 2/20 = 0.1. k is the largest k with P(U <= k - 1) <= alpha / 2.
    # alpha 0.1: alpha / 2 = 0.05 = P(U <= 0), so k = 1 and the interval is [D_1, D_9] = [7, 30].
    assert _as_floats(shift_ci_rows(_rows(_A3), _rows(_B3), 0.1)) == [[13.0], [7.0], [30.0]]
    # alpha 0.2: alpha / 2 = 0.1 = P(U <= 1), k = 2: [D_2, D_8] = [9, 29].
    assert _as_floats(shift_ci_rows(_rows(_A3), _rows(_B3), 0.2)) == [[13.0], [9.0], [29.0]]


def test_exact_interval_is_missing_just_below_the_smallest_attainable_alpha() -> None:
    # alpha / 2 = 0.05 - 5e-13 < P(U <= 0) = 0.05: no k >= 1, no interval at that confidence.
    estimate, low, high = shift_ci_rows(_rows(_A3), _rows(_B3), 0.1 - 1e-12)
    assert estimate.tolist() == [13.0]
    assert np.isnan(low).all()
    assert np.isnan(high).all()


def test_exact_table_is_used_with_fifty_values_on_the_larger_side() -> None:
    # n = 1, m = 50, no ties: U of b is the number of b above the single a value, uniform on 0..50,
    # P(U <= u) = (u + 1) / 51. The normal approximation would give no interval here
    # (floor(25 - 1.96 * sqrt(50 * 52 / 12)) = floor(25 - 28.85) < 1).
    a = np.array([20.5])
    b = np.arange(50.0)
    # Differences b - a: -20.5, -19.5, ..., 28.5; median (D_25 + D_26) / 2 = (3.5 + 4.5) / 2 = 4.0.
    # alpha 0.05: 1/51 = 0.0196 <= 0.025 < 2/51 = 0.0392: k = 1, [D_1, D_50] = [-20.5, 28.5].
    assert _as_floats(shift_ci_rows(_rows(a), _rows(b), 0.05)) == [[4.0], [-20.5], [28.5]]
    # alpha 0.08: 2/51 = 0.0392 <= 0.04 < 3/51: k = 2, [D_2, D_49] = [-19.5, 27.5].
    assert _as_floats(shift_ci_rows(_rows(a), _rows(b), 0.08)) == [[4.0], [-19.5], [27.5]]


def _single_a_tied_ranks(a_value: float, b: FloatArray, alpha: float) -> tuple[int, int]:
    """(k_low, k_high) for one a value against b, from the null conditional on the ties: the a value
    is any of the m + 1 pooled values, each equally likely. k_high is the largest k with
    P(U of b <= k - 1) <= alpha / 2, k_low the same for U of a = m - U of b (0 where none)."""
    pooled = np.concatenate([[a_value], b])
    u_of_b = []
    for index, value in enumerate(pooled):
        others = np.delete(pooled, index)
        u_of_b.append(float(np.sum(others > value) + 0.5 * np.sum(others == value)))
    null = np.array(u_of_b)
    m = b.size
    k_high = max((k for k in range(1, m + 1) if np.mean(null <= k - 1) <= alpha / 2), default=0)
    k_low = max((k for k in range(1, m + 1) if np.mean(m - null <= k - 1) <= alpha / 2), default=0)
    return k_low, k_high


def test_tied_row_of_fifty_values_uses_the_distribution_conditional_on_its_ties() -> None:
    # n = 1, m = 49, 50 values in all, with ties: b is 0, each of 1..23 twice, 30 and 31; a's 10 ties
    # b's two 10s.
    a = np.array([10.0])
    b = np.concatenate([[0.0], np.repeat(np.arange(1.0, 24.0), 2), [30.0, 31.0]])
    k_low, k_high = _single_a_tied_ranks(10.0, b, 0.05)
    # U of b: 0 when a is the unique 31 (1/50), 1 when it is the 30 (P(U <= 1) = 2/50 = 0.04): k_high = 1.
    # U of a: 0 when a is the unique 0, 1.5 when it is either 1 (the other 1 ties): P(U of a <= 1)
    # = 1/50 = 0.02, P(U of a <= 2) = 3/50 = 0.06: k_low = 2. The two ends use different k.
    assert (k_low, k_high) == (2, 1)
    diffs = _sorted_differences(a, b)
    # [D_2, D_49] = [1 - 10, 31 - 10]; median of b is its 25th value, 12: estimate 2.
    assert (diffs[k_low - 1], diffs[49 - k_high]) == (-9.0, 21.0)
    assert _as_floats(shift_ci_rows(_rows(a), _rows(b), 0.05)) == [[2.0], [-9.0], [21.0]]


def test_tied_low_confidence_interval_can_end_on_the_last_or_first_difference() -> None:
    # n = 1, m = 2, alpha 0.8 (what a one-sided verdict at alpha 0.4 asks for), alpha / 2 = 0.4.
    # Row 1: a = 3, b = 1, 3. U of a is 0 (a is the 1, chance 1/3) or 1.5 (a is either 3, 2/3):
    # P(U of a <= 1) = 1/3 <= 0.4, so k_low = 2 = nm, the lower end is D_2, the last difference.
    # U of b is 2 (1/3) or 0.5 (2/3): P(U of b <= 0) = 0, P(U of b <= 1) = 2/3: k_high = 1.
    # Row 2: a = 1, b = 1, 3, the mirror: k_low = 1, k_high = 2, the upper end is D_(2 - 2 + 1) = D_1.
    a = np.array([[3.0], [1.0]])
    b = np.array([[1.0, 3.0], [1.0, 3.0]])
    assert _single_a_tied_ranks(3.0, b[0], 0.8) == (2, 1)
    assert _single_a_tied_ranks(1.0, b[1], 0.8) == (1, 2)
    # Row 1: D = -2, 0: [D_2, D_2] = [0, 0], median -1. Row 2: D = 0, 2: [D_1, D_1] = [0, 0], median 1.
    assert _as_floats(shift_ci_rows(a, b, 0.8)) == [[-1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]


def test_normal_interval_with_ties_uses_the_tie_corrected_spread() -> None:
    # n = m = 30 (60 values, with ties: no exact table): fifteen 0s a side and otherwise distinct values.
    # One tie group of 30: sum(t^3 - t) = 27000 - 30 = 26970. sd = sqrt(900 / 12 * (61 - 26970 / 3540))
    # = sqrt(75 * 53.381) = 63.27; k = floor(450 - 1.95996 * 63.27) = floor(325.99) = 325.
    a = np.concatenate([np.zeros(15), 1.0 + np.arange(15.0)])
    b = np.concatenate([np.zeros(15), 8.501 + 0.01 * np.arange(15.0)])
    estimate, low, high = _normal_interval(a, b, 0.05)
    result = _as_floats(shift_ci_rows(_rows(a), _rows(b), 0.05))
    assert result == [[estimate], [low], [high]]
    diffs = _sorted_differences(a, b)
    assert (low, high) == (float(diffs[324]), float(diffs[900 - 325]))
    # The neighbouring ranks give other ends (a spread off by a hair would move k to 326).
    assert diffs[325] != diffs[324]
    assert diffs[900 - 326] != diffs[900 - 325]


def test_a_wide_single_row_gets_its_normal_interval() -> None:
    # 160 values a side: 160 * 160 * 160 > 4 000 000 (the chunking budget), a case where the number of
    # columns exceeds the rows allowed per chunk; one row still needs no chunking at all.
    # No ties: sd = sqrt(25600 / 12 * 321) = 827.5, k = floor(12800 - 1.95996 * 827.5) = 11178.
    a = np.arange(160.0)
    b = 0.37 + 1.013 * np.arange(160.0)
    estimate, low, high = _normal_interval(a, b, 0.05)
    assert _as_floats(shift_ci_rows(_rows(a), _rows(b), 0.05)) == [[estimate], [low], [high]]
    diffs = _sorted_differences(a, b)
    assert (low, high) == (float(diffs[11177]), float(diffs[25600 - 11178]))


def test_rows_split_into_chunks_keep_estimate_low_and_high_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    # A budget of 20 differences per chunk: 9 differences a row, so 2 rows a chunk (5 rows: 2 + 2 + 1).
    monkeypatch.setattr(batch, "_CHUNK_ELEMENTS", 20)
    shifts = 100.0 * np.arange(5.0)
    a = np.tile(_A3, (5, 1))
    b = _B3[None, :] + shifts[:, None]
    # Row i: differences shifted by 100 i, so (13, 7, 30) + 100 i at alpha 0.1 (k = 1, as above).
    estimate, low, high = shift_ci_rows(a, b, 0.1)
    assert estimate.tolist() == (13.0 + shifts).tolist()
    assert low.tolist() == (7.0 + shifts).tolist()
    assert high.tolist() == (30.0 + shifts).tolist()


@pytest.mark.parametrize("alpha", [1e-8, 1e-20])
def test_tiny_alpha_far_below_the_reach_of_a_normal_row_gives_no_interval(alpha: float) -> None:
    # n = 1, m = 60 (normal approximation), no ties: sd = sqrt(60 / 12 * 62) = 17.61. At alpha 1e-8,
    # z = 5.73 and k = floor(30 - 100.9) = -71: no interval (k - 1 = -72 is below -60, not an index).
    # At 1e-20 (where 1 - alpha / 2 rounds to 1.0, so the product takes z from the upper tail) z = 9.3
    # and k = floor(30 - 9.3 * 17.61) < 1 as well. (tests/stats/test_tiny_alpha.py has a row long
    # enough for an interval at 1e-20.)
    assert 30 - float(sps.norm.isf(alpha / 2)) * np.sqrt(60 / 12 * 62) < 1
    a = np.array([0.5])
    b = np.arange(60.0)
    # median of b - 0.5: (29 + 30) / 2 - 0.5 = 29.
    estimate, low, high = shift_ci_rows(_rows(a), _rows(b), alpha)
    assert estimate.tolist() == [29.0]
    assert np.isnan(low).all()
    assert np.isnan(high).all()


def test_constant_normal_row_at_tiny_alpha_gives_no_interval_and_no_warning() -> None:
    # 60 equal values (normal approximation): sum(t^3 - t) = 60^3 - 60, so the tie-corrected variance
    # 900 / 12 * (61 - 215940 / 3540) = 75 * (61 - 61) = 0: no spread, no interval. At the smallest
    # double, 5e-324, alpha / 2 underflows to 0 and z is infinite: z * 0 is NaN. That row's k is
    # discarded, and no warning reaches the caller.
    assert 5e-324 / 2 == 0.0 and float(sps.norm.isf(0.0)) == np.inf
    rows = np.full((1, 30), 7.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        estimate, low, high = shift_ci_rows(rows, rows, 5e-324)
    assert estimate.tolist() == [0.0]
    assert np.isnan(low).all()
    assert np.isnan(high).all()

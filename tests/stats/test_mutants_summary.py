"""Tests that kill mutants mutmut found surviving in bootscope/stats/summary.py (make mutation):
each asserts a value computed by hand or by scipy, not by the code under test.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats.summary import median_ci, median_ci_ranks, summarize, tukey_outliers


def _ranks_by_scipy(n: int, alpha: float) -> tuple[int, int] | None:
    # Largest k with P(Bin(n, 1/2) < k) = P(Bin(n, 1/2) <= k - 1) <= alpha / 2; ranks k, n - k + 1.
    ks = [k for k in range(1, n + 1) if sps.binom.cdf(k - 1, n, 0.5) <= alpha / 2]
    return (max(ks), n - max(ks) + 1) if ks else None


@pytest.mark.parametrize(
    ("n", "alpha", "ranks"),
    [
        # P(Bin(10) <= 1) = (1 + 10) / 1024 = alpha / 2 exactly: k = 2 still qualifies;
        # P(Bin(10) <= 2) = 56 / 1024 > 11 / 1024, so k = 2.
        (10, 22 / 1024, (2, 9)),
        # P(Bin(5) <= 0) = 1 / 32 = 0.0625 / 2 exactly: k = 1 gives coverage 1 - 2/32 = 1 - alpha.
        (5, 0.0625, (1, 5)),
        # P(Bin(2) <= 0) = 1 / 4 = 0.5 / 2 exactly: k = 1.
        (2, 0.5, (1, 2)),
    ],
)
def test_median_ci_ranks_keeps_the_rank_whose_tail_equals_half_alpha(
    n: int, alpha: float, ranks: tuple[int, int]
) -> None:
    assert _ranks_by_scipy(n, alpha) == ranks
    assert median_ci_ranks(n, alpha) == ranks


def test_median_ci_ranks_accepts_alpha_above_one_half() -> None:
    # The CLI accepts any alpha in (0, 1). n = 10, alpha = 0.6, alpha / 2 = 0.3:
    # P(Bin(10) <= 3) = 176 / 1024 = 0.172 <= 0.3, P(Bin(10) <= 4) = 386 / 1024 = 0.377 > 0.3: k = 4.
    assert _ranks_by_scipy(10, 0.6) == (4, 7)
    assert median_ci_ranks(10, 0.6) == (4, 7)
    # n = 3, alpha = 0.9: P(Bin(3) <= 0) = 1/8 <= 0.45, P(Bin(3) <= 1) = 4/8 > 0.45: k = 1.
    assert median_ci_ranks(3, 0.9) == (1, 3)


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1, 0.5, 0.6, 0.9])
def test_median_ci_ranks_match_the_binomial_rule_for_small_n(alpha: float) -> None:
    for n in range(1, 61):
        assert median_ci_ranks(n, alpha) == _ranks_by_scipy(n, alpha), n


def test_median_ci_error_names_side_x() -> None:
    with pytest.raises(StatsError, match=r"^side x holds a NaN or infinite value"):
        median_ci([1.0, 2.0, float("nan"), 4.0, 5.0, 6.0], 0.05)


def test_tukey_outliers_error_names_side_x() -> None:
    with pytest.raises(StatsError, match=r"^side x holds a NaN or infinite value"):
        tukey_outliers([1.0, 2.0, float("inf"), 4.0, 5.0])


def test_tukey_outliers_flags_a_value_among_exactly_four() -> None:
    values = [0.0, 1.0, 2.0, 100.0]
    # Linear percentiles (numpy's default): Q1 at position 3 * 0.25 = 0.75 -> 0 + 0.75 * 1 = 0.75;
    # Q3 at 3 * 0.75 = 2.25 -> 2 + 0.25 * 98 = 26.5; IQR 25.75; upper fence 26.5 + 38.625 = 65.125.
    assert list(np.percentile(values, [25.0, 75.0])) == [0.75, 26.5]
    assert tukey_outliers(values) == (100.0,)


def test_tukey_outliers_values_on_the_fences_are_inside() -> None:
    values = [-15.0, 0.0, 5.0, 10.0, 25.0]
    # Q1 at position 4 * 0.25 = 1 -> 0; Q3 at 4 * 0.75 = 3 -> 10; IQR 10;
    # fences 0 - 15 = -15 and 10 + 15 = 25: both ends sit exactly on a fence, so none is outside.
    assert list(np.percentile(values, [25.0, 75.0])) == [0.0, 10.0]
    assert tukey_outliers(values) == ()


def test_tukey_outliers_flags_a_value_just_above_the_upper_fence() -> None:
    values = [-10.0, -10.0, -10.0, 0.0, 15.5]
    # Q1 at position 1 -> -10; Q3 at position 3 -> 0; IQR 10; fences -25 and 15: 15.5 > 15.
    assert list(np.percentile(values, [25.0, 75.0])) == [-10.0, 0.0]
    assert tukey_outliers(values) == (15.5,)


def test_summarize_empty_side_error_names_the_side() -> None:
    with pytest.raises(StatsError, match=r"^side baseline has 0 sample\(s\)"):
        summarize([], "baseline", 0.05)


def test_summarize_carries_interval_outliers_and_values() -> None:
    values = [5.0, 1.0, 9.0, 3.0, 7.0, 2.0, 8.0, 4.0, 6.0, 100.0]
    side = summarize(values, "candidate", 0.05)
    # n = 10, alpha 0.05: P(Bin(10) <= 1) = 11/1024 = 0.0107 <= 0.025 < P(Bin(10) <= 2) = 0.0547:
    # ranks 2 and 9 of the sorted values 1..9, 100 -> (2, 9).
    assert _ranks_by_scipy(10, 0.05) == (2, 9)
    assert side.median_ci == (2.0, 9.0)
    # Q1 at position 9 * 0.25 = 2.25 -> 3.25; Q3 at 6.75 -> 7.75; IQR 4.5; upper fence 14.5.
    assert list(np.percentile(values, [25.0, 75.0])) == [3.25, 7.75]
    assert side.outliers == (100.0,)
    assert side.values == tuple(values)

"""The Mann-Whitney null distribution conditional on ties, against enumeration of every split."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats.exact_ties import observed_u2, tie_groups, tied_interval_ranks, tied_u2_null


def _enumerated_u2(pooled: np.ndarray, m: int) -> np.ndarray:
    """Twice U of every choice of m pooled values as b (the rest as a), by brute force."""
    doubled_ranks = np.rint(2 * sps.rankdata(pooled)).astype(int)
    sums = [doubled_ranks[list(chosen)].sum() for chosen in itertools.combinations(range(pooled.size), m)]
    return np.array(sums) - m * (m + 1)


@pytest.mark.parametrize(
    ("pooled", "m"),
    [
        # Asymmetric tie groups (a triple at the bottom, no tie at the top): not a symmetric law.
        ([1.0, 1.0, 1.0, 2.0, 3.0, 3.0, 4.0, 5.0], 3),
        ([8.2, 8.2, 8.2, 8.4, 8.5, 8.7, 8.7, 9.3, 9.3, 7.6, 8.8], 5),
        ([0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 2.0], 2),
    ],
)
def test_null_distribution_equals_enumeration(pooled: list[float], m: int) -> None:
    values = np.array(pooled)
    u2, cdf = tied_u2_null(tie_groups(values), m)
    brute = _enumerated_u2(values, m)
    support, counts = np.unique(brute, return_counts=True)
    assert u2.tolist() == support.tolist()
    assert np.allclose(cdf, np.cumsum(counts) / brute.size)


def test_observed_u2_counts_ties_as_one_half() -> None:
    a, b = np.array([1.0, 2.0, 3.0]), np.array([2.0, 4.0])
    # b=2 beats 1 and ties 2; b=4 beats all three: U = 1 + 0.5 + 3 = 4.5.
    assert observed_u2(a, b) == 9
    assert observed_u2(a, b) == 2 * sps.mannwhitneyu(b, a).statistic


def test_interval_ranks_are_the_largest_within_alpha() -> None:
    pooled = np.array([8.7, 8.4, 8.6, 8.2, 9.0, 8.7, 8.8, 9.3, 8.8, 8.3, 8.5, 8.2, 7.6, 8.2, 8.7])
    groups, m, n_a, alpha = tie_groups(pooled), 5, 10, 0.1
    k_low, k_high, coverage = tied_interval_ranks(groups, m, n_a, alpha)
    brute = _enumerated_u2(pooled, m)
    assert np.mean(brute <= 2 * (k_high - 1)) <= alpha / 2 < np.mean(brute <= 2 * k_high)
    mirrored = 2 * n_a * m - brute  # twice U of a
    assert np.mean(mirrored <= 2 * (k_low - 1)) <= alpha / 2 < np.mean(mirrored <= 2 * k_low)
    assert coverage is not None and coverage >= 1 - alpha


def test_sizes_out_of_range_are_refused() -> None:
    with pytest.raises(StatsError):
        tied_u2_null((2, 2), 0)
    with pytest.raises(StatsError):
        tied_u2_null((30, 30), 10)

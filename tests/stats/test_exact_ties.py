"""The Mann-Whitney null distribution conditional on ties, against enumeration of every split."""

from __future__ import annotations

import itertools
import math

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


def _counted_by_dict(groups: tuple[int, ...], m: int) -> dict[int, int]:
    """Ways to take m values with each doubled rank sum, one tie group at a time, in a plain dict."""
    ways = {(0, 0): 1}
    start = 0
    for size in groups:
        doubled_rank = 2 * start + size + 1
        grown: dict[tuple[int, int], int] = {}
        for (taken, total), count in ways.items():
            for more in range(min(size, m - taken) + 1):
                key = (taken + more, total + more * doubled_rank)
                grown[key] = grown.get(key, 0) + count * math.comb(size, more)
        ways = grown
        start += size
    return {total - m * (m + 1): count for (taken, total), count in ways.items() if taken == m}


@pytest.mark.parametrize(
    ("groups", "m"),
    [
        ((1,) * 30 + (2, 3, 4, 5, 6), 20),  # 50 values, ties only at the top
        ((7, 1, 1, 12, 3, 1, 1, 1, 9, 2, 1, 1), 3),  # groups larger than m
        ((2,) * 25, 49),  # m one short of the whole
        ((50,), 25),  # one value repeated
    ],
)
def test_null_distribution_of_up_to_fifty_values_equals_a_plain_count(
    groups: tuple[int, ...], m: int
) -> None:
    # Too many splits to enumerate (C(50, 20) = 4.7e13): the same count kept in a dict instead.
    counted = _counted_by_dict(groups, m)
    support = sorted(counted)
    u2, cdf = tied_u2_null(groups, m)
    assert u2.tolist() == support
    ways = np.cumsum([counted[value] for value in support])
    assert int(ways[-1]) == math.comb(sum(groups), m)
    assert cdf.tolist() == (ways.astype(np.float64) / float(ways[-1])).tolist()


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

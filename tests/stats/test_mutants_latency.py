"""Tests that kill mutants mutmut found surviving in bootscope/stats/latency.py (make mutation): each
asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats.latency import (
    clopper_pearson,
    exceedance_clustering,
    exceedances,
    histogram_quantile,
    order_statistic_ranks,
    rate_ratio,
)


def _hist(values: list[int]) -> np.ndarray:
    return np.array(values, dtype=np.int64)


# --- _check: bad histograms -------------------------------------------------------------------


def test_a_negative_count_is_rejected_even_without_overflow() -> None:
    with pytest.raises(StatsError, match="non-negative counts"):
        histogram_quantile(_hist([-1, 5]), 0, 0.5)
    with pytest.raises(StatsError, match="non-negative counts"):
        exceedances(_hist([3, -2, 4]), 0, 0)


def test_a_two_dimensional_histogram_is_rejected() -> None:
    with pytest.raises(StatsError, match="one dimension"):
        histogram_quantile(np.array([[1, 2], [3, 4]], dtype=np.int64), 0, 0.5)


# --- order_statistic_ranks: argument checks and the lower clamp -------------------------------


@pytest.mark.parametrize(
    ("p", "confidence"),
    [(0.0, 0.95), (1.0, 0.95), (1.5, 0.95), (0.5, 0.0), (0.5, 1.0), (0.5, 1.5)],
)
def test_order_statistic_ranks_reject_p_or_confidence_outside_the_open_unit_interval(
    p: float, confidence: float
) -> None:
    with pytest.raises(StatsError, match="strictly between 0 and 1"):
        order_statistic_ranks(10, p, confidence)


def test_order_statistic_ranks_clamp_the_lower_rank_to_one_not_two() -> None:
    # Median of 5 at 95 %: P(B <= 0) = 1/32 = 0.03125 >= 0.025, so l = 0, clamped to rank 1.
    # P(B <= 4) = 31/32 = 0.96875 < 0.975 <= P(B <= 5) = 1, so u = 5 + 1 = 6.
    assert order_statistic_ranks(5, 0.5, 0.95) == (1, 6)


# --- histogram_quantile: upper end at rank N, the returned fields, resolvable at exactly 10 ----


def _binom_cdf(k: int, n: int, p: float) -> float:
    return math.fsum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


def test_an_upper_rank_equal_to_n_gives_the_largest_sample_not_none() -> None:
    # 20 samples, one per us 0..19 (rank r has value r - 1), p = 0.8 at 95 %.
    # P(B <= 18) = 1 - 0.8^20 - 20 * 0.8^19 * 0.2 = 1 - 0.0115 - 0.0576 = 0.9308 < 0.975, and
    # P(B <= 19) = 1 - 0.8^20 = 0.9885 >= 0.975: u = 19 + 1 = 20 = N, the largest sample (19 us).
    assert _binom_cdf(18, 20, 0.8) < 0.975 <= _binom_cdf(19, 20, 0.8)
    low_rank = next(k for k in range(21) if _binom_cdf(k, 20, 0.8) >= 0.025)
    estimate = histogram_quantile(np.ones(20, dtype=np.int64), 0, 0.8, 0.95)
    assert estimate.high_us == 19
    assert estimate.value_us == 15  # rank ceil(0.8 * 20) = 16
    assert estimate.low_us == low_rank - 1


def test_a_quantile_estimate_carries_its_p_and_confidence() -> None:
    estimate = histogram_quantile(np.ones(20, dtype=np.int64), 0, 0.8, 0.9)
    assert estimate.p == 0.8
    assert estimate.confidence == 0.9


def test_resolvable_is_a_bool_and_holds_at_exactly_ten_exceedances() -> None:
    # 20 samples at p = 0.5: N x (1 - p) = 20 x 0.5 = 10.0 exactly, which is enough (>= 10).
    assert histogram_quantile(np.ones(20, dtype=np.int64), 0, 0.5).resolvable is True
    # 19 samples: 19 x 0.5 = 9.5 < 10.
    assert histogram_quantile(np.ones(19, dtype=np.int64), 0, 0.5).resolvable is False


# --- exceedances ---------------------------------------------------------------------------------


def test_a_threshold_at_the_histograms_end_with_overflow_is_refused() -> None:
    # len(counts) = 3: the overflow holds samples >= 3 us, which cannot be compared with 3 us.
    with pytest.raises(StatsError, match=r"beyond the histogram's end \(3 us\).*larger -h"):
        exceedances(_hist([1, 2, 3]), 2, 3)


def test_a_threshold_beyond_the_end_with_one_overflowed_sample_is_refused() -> None:
    with pytest.raises(StatsError, match=r"threshold 5 us is beyond"):
        exceedances(_hist([1, 2, 3]), 1, 5)


def test_a_threshold_beyond_the_end_without_overflow_counts_nothing() -> None:
    # No sample is above 5 us in a histogram of 0..2 us with nothing in the overflow.
    assert exceedances(_hist([1, 2, 3]), 0, 5) == 0


def test_a_negative_threshold_counts_every_sample() -> None:
    # Every latency (>= 0 us) exceeds -1 us: 4 + 2 + 3 = 9 in the histogram, + 1 overflowed = 10.
    assert exceedances(_hist([4, 2, 3]), 1, -1) == 10


# --- clopper_pearson -----------------------------------------------------------------------------


@pytest.mark.parametrize(("k", "n"), [(0, 0), (5, 3), (-1, 4)])
def test_clopper_pearson_rejects_no_trials_or_k_outside_zero_to_n(k: int, n: int) -> None:
    with pytest.raises(StatsError, match=f"k={k}, n={n}"):
        clopper_pearson(k, n)


# --- rate_ratio ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k_a", "n_a", "k_b", "n_b"),
    [(5, 3, 1, 10), (1, 10, 5, 3), (0, 0, 1, 10), (1, 10, 0, 0), (-1, 10, 1, 10), (1, 10, -1, 10)],
)
def test_rate_ratio_rejects_no_samples_or_counts_outside_zero_to_n(
    k_a: int, n_a: int, k_b: int, n_b: int
) -> None:
    with pytest.raises(StatsError, match="0 <= k <= n and n >= 1"):
        rate_ratio(k_a, n_a, k_b, n_b)


@pytest.mark.parametrize(
    ("k_a", "n_a", "k_b", "n_b", "expected"),
    [
        (1, 1, 1, 2, 0.5),  # n_a = 1: (1/2) / (1/1)
        (1, 2, 1, 1, 2.0),  # n_b = 1: (1/1) / (1/2)
        (10, 10, 5, 10, 0.5),  # k_a = n_a: (5/10) / (10/10)
        (5, 10, 10, 10, 2.0),  # k_b = n_b: (10/10) / (5/10)
        (3, 10, 0, 10, 0.0),  # k_b = 0: (0/10) / (3/10)
    ],
)
def test_rate_ratio_accepts_the_edges_of_valid_counts(
    k_a: int, n_a: int, k_b: int, n_b: int, expected: float
) -> None:
    result = rate_ratio(k_a, n_a, k_b, n_b)
    assert result.ratio == pytest.approx(expected)
    assert (result.k_a, result.n_a, result.k_b, result.n_b) == (k_a, n_a, k_b, n_b)


def test_rate_ratio_with_no_exceedance_in_a_has_no_ratio_and_an_unbounded_interval() -> None:
    # k_a = 0, k_b = 2 = k: pi's Clopper-Pearson interval at 90 % is ((0.05)^(1/2), 1], so
    # low = pi / (1 - pi) x n_a / n_b = 0.223607 / 0.776393 x 1 = 0.288007; high is unbounded.
    result = rate_ratio(0, 10, 2, 10, 0.9)
    assert result.ratio is None
    assert result.high is None
    assert result.low == pytest.approx(math.sqrt(0.05) / (1 - math.sqrt(0.05)), rel=1e-9)
    assert result.confidence == 0.9


def test_rate_ratio_with_no_exceedance_in_b_has_a_zero_lower_end() -> None:
    # k_b = 0: pi's lower end is 0, so R's lower end is 0, not 1.
    result = rate_ratio(3, 10, 0, 10)
    assert result.low == 0.0
    assert result.ratio == 0.0


def test_rate_ratio_with_no_exceedances_at_all() -> None:
    result = rate_ratio(0, 10, 0, 10)
    assert (result.ratio, result.low, result.high, result.p_value) == (None, 0.0, None, 1.0)


def test_rate_ratio_with_a_single_exceedance_is_computed() -> None:
    # k = 1, in a: R = (0/10) / (1/10) = 0; pi in [0, 1 - 0.025] (k_b = 0 of 1: 1 - (0.025)^(1/1)),
    # so high = 0.975 / 0.025 x 10 / 10 = 39. Under H0 pi = 1/2: P(k_b = 0) = P(k_b = 1), p = 1.
    result = rate_ratio(1, 10, 0, 10)
    assert result.ratio == 0.0
    assert result.high == pytest.approx(39.0)
    assert result.p_value == pytest.approx(1.0)


def test_rate_ratio_p_value_uses_the_sample_share_under_h0() -> None:
    # Under H0, k_b | k ~ Bin(k, n_b / (n_a + n_b)) = Bin(40, 2000 / 3000), not Bin(40, 1/2).
    result = rate_ratio(10, 1000, 30, 2000)
    assert result.p_value == pytest.approx(sps.binomtest(30, 40, 2 / 3).pvalue)
    assert result.ratio == pytest.approx((30 / 2000) / (10 / 1000))  # 1.5


# --- exceedance_clustering -----------------------------------------------------------------------


_CLUSTER_MESSAGE = r"^need one exceedance count and a positive sample count per run$"


@pytest.mark.parametrize(
    ("exceeded", "samples"),
    [([-1, 3], [10, 10]), ([1, 2], [0, 10]), ([1, 2], [10])],
)
def test_exceedance_clustering_rejects_negative_or_mismatched_inputs(
    exceeded: list[int], samples: list[int]
) -> None:
    with pytest.raises(StatsError, match=_CLUSTER_MESSAGE):
        exceedance_clustering(exceeded, samples)


def test_exceedance_clustering_accepts_a_run_of_one_sample() -> None:
    result = exceedance_clustering([1, 0], [1, 10])
    assert result is not None
    assert result.counts == (1, 0)
    assert result.busiest_share == 1.0  # 1 of 1 exceedance
    assert 0.0 < result.p <= 1.0


def test_exceedance_clustering_tests_two_runs() -> None:
    result = exceedance_clustering([5, 0], [100, 100])
    assert result is not None
    assert result.counts == (5, 0)


def test_exceedance_clustering_with_counts_exactly_as_expected_has_p_one() -> None:
    # 5 and 5 of 10 samples each: expected 10 x 1/2 = 5 per run, chi-square 0; every draw's
    # statistic is >= 0 (ties included), so p = (4000 + 1) / (4000 + 1) = 1 exactly.
    result = exceedance_clustering([5, 5], [10, 10])
    assert result is not None
    assert result.p == 1.0
    assert result.counts == (5, 5)
    assert result.busiest_share == 0.5


def test_exceedance_clustering_p_is_seeded_and_near_the_exact_p() -> None:
    exceeded, samples = [3, 1, 0], [100, 100, 100]
    # Exact: 4 exceedances over 3 equal runs, expected 4/3 each; chi-square of (3, 1, 0) is
    # ((5/3)^2 + (1/3)^2 + (4/3)^2) / (4/3) = (42/9) / (4/3) = 3.5. P(statistic >= 3.5) by
    # enumerating every split of 4 into 3 runs with multinomial probabilities.
    expected = 4 / 3
    exact = 0.0
    for a, b in itertools.product(range(5), repeat=2):
        c = 4 - a - b
        if c < 0:
            continue
        statistic = sum((x - expected) ** 2 / expected for x in (a, b, c))
        if statistic >= 3.5 - 1e-9:
            exact += math.factorial(4) / (math.factorial(a) * math.factorial(b) * math.factorial(c)) / 81
    found = [exceedance_clustering(exceeded, samples) for _ in range(3)]
    assert all(f is not None for f in found)
    ps = [f.p for f in found if f is not None]
    assert ps[0] == pytest.approx(exact, abs=0.03)
    # The same data give the same p (the draws are seeded).
    assert ps[0] == ps[1] == ps[2]

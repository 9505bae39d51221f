"""Latency statistics against independent computations: raw samples expanded from histograms, scipy,
brute-force binomial sums, coverage and A/A simulations (fixed seeds)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats.batch import SAME, verdict_rows
from bootscope.stats.compare import Options
from bootscope.stats.latency import (
    clopper_pearson,
    exceedances,
    histogram_quantile,
    order_statistic_ranks,
    rate_ratio,
)
from bootscope.stats.latency_tail import TOO_FEW, compare_run_statistics, gev_fit


@given(
    st.lists(st.integers(0, 30), min_size=1, max_size=40),
    st.integers(0, 20),
    st.sampled_from([0.5, 0.9, 0.99, 0.999]),
)
def test_quantile_is_the_order_statistic_of_the_expanded_samples(counts_list, overflow, p) -> None:  # type: ignore[no-untyped-def]
    counts = np.array(counts_list, dtype=np.int64)
    if counts.sum() + overflow == 0:
        return
    # Expand: every sample once, overflow as +inf (larger than anything the histogram holds).
    raw = np.concatenate([np.repeat(np.arange(len(counts)), counts), np.full(overflow, np.inf)])
    expected = np.sort(raw)[math.ceil(p * raw.size) - 1]
    estimate = histogram_quantile(counts, overflow, p)
    assert (None if np.isinf(expected) else int(expected)) == estimate.value_us
    threshold = len(counts) // 2
    assert exceedances(counts, overflow, threshold) == int((raw > threshold).sum())


@pytest.mark.parametrize(("n", "p"), [(20, 0.5), (200, 0.9), (1000, 0.99)])
def test_order_statistic_ranks_cover_by_brute_force(n: int, p: float) -> None:
    low, high = order_statistic_ranks(n, p, 0.95)
    # X_(l) <= q_p <= X_(u) exactly when l <= B < u, B ~ Binomial(n, p): sum the probabilities.
    coverage = sum(math.comb(n, b) * p**b * (1 - p) ** (n - b) for b in range(low, min(high, n + 1)))
    assert coverage >= 0.95


def test_quantile_interval_covers_the_true_quantile() -> None:
    rng = np.random.default_rng(7)
    true_p99 = math.floor(sps.lognorm.ppf(0.99, 0.8, scale=20))
    hits = 0
    for _ in range(300):
        samples = np.floor(rng.lognormal(np.log(20), 0.8, 2000)).astype(np.int64)
        estimate = histogram_quantile(np.bincount(samples), 0, 0.99)
        hits += estimate.low_us <= true_p99 <= estimate.high_us  # type: ignore[operator]
    assert hits / 300 >= 0.93


def test_unresolvable_and_overflow_quantiles() -> None:
    counts = np.array([0, 900, 80, 10], dtype=np.int64)
    assert not histogram_quantile(counts, 10, 0.999).resolvable  # 1000 x 0.001 = 1 < 10
    assert histogram_quantile(counts, 10, 0.995).value_us is None  # rank 995 lies in the overflow
    with pytest.raises(StatsError):
        exceedances(counts, 10, 5)  # beyond the histogram, overflow cannot be placed


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (17, 1000)])
def test_clopper_pearson_equals_scipy(k: int, n: int) -> None:
    expected = sps.binomtest(k, n).proportion_ci(0.95, method="exact")
    assert clopper_pearson(k, n) == pytest.approx((expected.low, expected.high))


def test_rate_ratio_interval_covers_by_simulation() -> None:
    rng = np.random.default_rng(3)
    n_a, n_b, rate_a, true_ratio = 100_000, 50_000, 2e-4, 2.0
    covered = 0
    for _ in range(1000):
        k_a, k_b = rng.binomial(n_a, rate_a), rng.binomial(n_b, rate_a * true_ratio)
        result = rate_ratio(k_a, n_a, k_b, n_b)
        covered += result.low <= true_ratio <= (result.high if result.high is not None else math.inf)
    assert covered / 1000 >= 0.95


def test_rate_ratio_point_and_p_value() -> None:
    result = rate_ratio(10, 1000, 30, 1000)
    assert result.ratio == pytest.approx(3.0)
    assert result.low < 3.0 < result.high  # type: ignore[operator]
    assert result.p_value == pytest.approx(sps.binomtest(30, 40, 0.5).pvalue)


def _per_run_statistic(rng: np.random.Generator, runs: int, cycles: int, rank: int, ppf) -> np.ndarray:  # type: ignore[no-untyped-def]
    # The rank-th smallest of `cycles` uniforms is Beta(rank, cycles - rank + 1): mapped through the
    # latency distribution's inverse CDF and floored to whole us, this is exactly the value the run's
    # histogram gives for that order statistic, without drawing every cycle.
    return np.floor(ppf(rng.beta(rank, cycles - rank + 1, size=runs)))


@pytest.mark.parametrize(
    ("ppf", "statistic"),
    [
        (lambda u: sps.pareto.ppf(u, 1.5, scale=10), "p99.9"),
        (lambda u: sps.pareto.ppf(u, 1.5, scale=10), "max"),
        (lambda u: sps.lognorm.ppf(u, 1.0, scale=15), "p99.99"),
    ],
)
def test_aa_false_positive_rate_on_heavy_tails(ppf, statistic: str) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(2024)
    cycles, runs, replicates = 1_000_000, 10, 4000
    rank = {"p99.9": math.ceil(0.999 * cycles), "p99.99": math.ceil(0.9999 * cycles), "max": cycles}[
        statistic
    ]
    a = _per_run_statistic(rng, runs * replicates, cycles, rank, ppf).reshape(replicates, runs)
    b = _per_run_statistic(rng, runs * replicates, cycles, rank, ppf).reshape(replicates, runs)
    rate = float(np.mean(verdict_rows(a, b, 0.05) != SAME))
    assert 0.035 <= rate <= 0.065, rate


def test_run_statistics_holm_and_minimum_runs() -> None:
    rng = np.random.default_rng(5)
    base = {"p99.9": list(rng.pareto(2, 8) + 30), "max": list(rng.pareto(1.5, 8) * 100 + 200)}
    slow = {"p99.9": [v + 50 for v in base["p99.9"]], "max": [v * 3 for v in base["max"]]}
    result = compare_run_statistics(base, slow, Options(bootstrap_resamples=0, power=False))
    assert [c.metric for c in result] == ["p99.9", "max"]
    assert result[0].verdict == "slower" and "Holm" in result[0].correction
    few = compare_run_statistics({"max": [1.0, 2, 3, 4]}, {"max": [9.0, 8, 7, 6]}, Options(power=False))
    assert few[0].verdict == TOO_FEW


def test_gev_fit_recovers_shape_and_return_level() -> None:
    true_c, loc, scale = -0.2, 50.0, 5.0  # scipy's c = -xi: a heavy tail, xi = 0.2
    maxima = sps.genextreme.rvs(true_c, loc=loc, scale=scale, size=200, random_state=11)
    fit = gev_fit(maxima, block_cycles=10_000, return_cycles=(10**6,), resamples=25)
    assert fit.shape_xi == pytest.approx(0.2, abs=0.1)
    assert fit.heavy_tail
    level, low, high = fit.return_levels[10**6]
    expected = sps.genextreme.isf(1 / 100, true_c, loc=loc, scale=scale)
    assert low <= expected <= high
    assert level == pytest.approx(expected, rel=0.15)


def test_exceedance_clustering_matches_chi_square_and_holds_its_level() -> None:
    from bootscope.stats.latency import exceedance_clustering

    # Large counts: the exact conditional p agrees with the chi-square test of homogeneity.
    exceeded, samples = [120, 95, 160, 110], [100_000, 90_000, 110_000, 100_000]
    table = np.array([exceeded, [n - k for n, k in zip(samples, exceeded, strict=True)]])
    chi2_p = sps.chi2_contingency(table, correction=False).pvalue
    found = exceedance_clustering(exceeded, samples)
    assert found is not None and found.p == pytest.approx(chi2_p, abs=0.02)
    # All in one run: clustered; none at all or one run: nothing to say.
    bunched = exceedance_clustering([30, 0, 1, 0, 0], [1000] * 5)
    assert bunched is not None and bunched.p < 0.001 and bunched.busiest_share == pytest.approx(30 / 31)
    assert exceedance_clustering([0, 0], [10, 10]) is None and exceedance_clustering([3], [10]) is None
    with pytest.raises(StatsError):
        exceedance_clustering([1, 2], [10])
    # A/A: runs with one common rate (small counts, where chi-square tables mislead) are called
    # clustered about as often as the level says.
    rng = np.random.default_rng(7)
    trials = 300
    hits = 0
    for _ in range(trials):
        counts = rng.binomial(10_000, 4e-4, size=6).tolist()
        result = exceedance_clustering(counts, [10_000] * 6)
        hits += result is not None and result.p < 0.05
    assert 0.02 <= hits / trials <= 0.08


def test_exactly_ten_exceedances_resolve_whatever_the_rounding() -> None:
    # 100 samples at p = 0.9 leave exactly 10 beyond the quantile by hand; in binary floating point
    # 100 * (1 - 0.9) is 9.999999999999998, which a plain >= 10 called unresolvable.
    assert histogram_quantile(np.ones(100, dtype=np.int64), 0, 0.9).resolvable
    assert histogram_quantile(np.ones(1000, dtype=np.int64), 0, 0.99).resolvable
    assert not histogram_quantile(np.ones(99, dtype=np.int64), 0, 0.9).resolvable  # 9.9 by hand

"""Rank statistics and side summaries against scipy called directly, or values worked out by hand."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats.rank import hodges_lehmann, mann_whitney, u_null_cdf, use_exact
from bootscope.stats.summary import median_ci, median_ci_ranks, summarize, tukey_outliers

SEED_A = [8.7, 8.4, 8.6, 8.2, 9.0, 8.7, 8.8, 9.3, 8.8, 8.3]
SEED_B = [8.5, 8.2, 7.6, 8.2, 8.7, 8.2, 7.8, 8.2, 9.3, 8.4]


@pytest.mark.parametrize(("n", "m"), [(1, 1), (2, 3), (3, 3), (5, 8), (10, 10), (12, 7)])
def test_u_null_cdf_matches_scipy_exact(n: int, m: int) -> None:
    cdf = u_null_cdf(n, m)
    assert len(cdf) == n * m + 1
    # Samples with no ties whose U takes every value: U of y against x for interleaved blocks.
    for u in range(0, n * m + 1, max(1, (n * m) // 7)):
        # Construct x, y with U(y, x) == u: y_j beats exactly the first few x values.
        x = np.arange(n, dtype=float) * 10.0
        y = np.full(m, -5.0) + np.arange(m) * 1e-3
        remaining = u
        for j in range(m):
            wins = min(n, remaining)
            y[j] = (wins - 1) * 10.0 + 5.0 + j * 1e-3 if wins else -5.0 + j * 1e-3
            remaining -= wins
        if remaining:
            continue
        assert sps.mannwhitneyu(y, x).statistic == u
        expected = sps.mannwhitneyu(y, x, alternative="less", method="exact").pvalue
        assert cdf[u] == pytest.approx(expected, rel=1e-9)


def test_u_null_cdf_by_enumeration_for_three_and_three() -> None:
    # All C(6, 3) = 20 ways to place b's ranks; U = sum of b's ranks - 6.
    counts = np.zeros(10)
    for ranks in itertools.combinations(range(1, 7), 3):
        counts[sum(ranks) - 6] += 1
    assert np.allclose(u_null_cdf(3, 3), np.cumsum(counts) / 20)


def test_mann_whitney_matches_scipy_with_and_without_ties() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.lognormal(0, 0.3, 15), rng.lognormal(0.2, 0.3, 12)
    result = mann_whitney(a, b)
    direct = sps.mannwhitneyu(b, a, method="exact")
    assert result.method == "exact"
    assert result.p == pytest.approx(direct.pvalue)
    assert result.statistic == pytest.approx(direct.statistic)
    # Ties beyond the exact sizes: scipy's tie-corrected normal approximation.
    big_a, big_b = np.round(rng.lognormal(0, 0.3, 30), 1), np.round(rng.lognormal(0.1, 0.3, 30), 1)
    tied = mann_whitney(big_a, big_b, "less")
    direct_tied = sps.mannwhitneyu(big_b, big_a, alternative="less", method="asymptotic")
    assert tied.method == "asymptotic"
    assert tied.p == pytest.approx(direct_tied.pvalue)


def test_seed_000_with_ties_is_exact_conditional() -> None:
    # Seed 000's numbers at 0.1 s resolution: the exact distribution given the ties (all C(20, 10)
    # splits, by scipy's permutation_test) gives 0.0332; the normal approximation said 0.0357.
    result = mann_whitney(SEED_A, SEED_B)
    assert result.method == "exact given the ties"
    assert result.p == pytest.approx(0.033157, abs=1e-6)
    assert result.statistic == pytest.approx(22.0)

    def u_of_first(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
        return np.asarray(sps.mannwhitneyu(x, y, axis=axis).statistic)

    for alternative in ("less", "greater"):
        direct = sps.permutation_test(
            (SEED_B, SEED_A), u_of_first, permutation_type="independent", n_resamples=np.inf,
            alternative=alternative, vectorized=True,
        )  # fmt: skip
        assert mann_whitney(SEED_A, SEED_B, alternative).p == pytest.approx(direct.pvalue, rel=1e-9)


def test_mann_whitney_n1_and_identical_values() -> None:
    single = mann_whitney([1.0], [2.0])
    assert single.p == pytest.approx(sps.mannwhitneyu([2.0], [1.0], method="exact").pvalue)
    assert single.p == pytest.approx(1.0)
    assert mann_whitney([3.0, 3.0], [3.0, 3.0]).p is None


def test_hodges_lehmann_estimate_is_median_of_pairwise_differences() -> None:
    # Hand: differences b - a for a = (1, 2, 4), b = (3, 7): 2, 1, -1, 6, 5, 3 -> median 2.5.
    shift = hodges_lehmann([1.0, 2.0, 4.0], [3.0, 7.0], 0.05)
    assert shift.estimate == pytest.approx(2.5)
    # 3 x 2 cannot reach 95 %: the smallest tail P(U <= 0) = 1 / C(5, 2) = 0.1 > 0.025.
    assert shift.ci is None


def test_hodges_lehmann_exact_interval_matches_scipy_inversion() -> None:
    rng = np.random.default_rng(11)
    a, b = rng.normal(10, 1, 9), rng.normal(9, 1, 11)
    shift = hodges_lehmann(a, b, 0.05)
    assert shift.method == "exact"
    assert shift.ci is not None
    low, high = shift.ci

    # Inversion: shifting b by a value just inside the interval is not rejected, just outside is.
    def p_at(delta: float) -> float:
        return float(sps.mannwhitneyu(b - delta, a, method="exact").pvalue)

    eps = 1e-9
    assert p_at(low + eps) >= 0.05 and p_at(high - eps) >= 0.05
    assert p_at(low - eps) < 0.05 and p_at(high + eps) < 0.05
    assert shift.coverage is not None and 0.95 <= shift.coverage < 0.97


def test_hodges_lehmann_seed_000_with_ties_uses_the_conditional_distribution() -> None:
    shift = hodges_lehmann(SEED_A, SEED_B, 0.05)
    assert shift.method == "exact given the ties"
    assert not use_exact(np.array(SEED_A), np.array(SEED_B))
    diffs = np.sort(np.subtract.outer(SEED_B, SEED_A).ravel())
    assert shift.estimate == pytest.approx(np.median(diffs))
    # Given the ties, P(U <= 24) <= 0.025 < P(U <= 25) on both sides -> k = 25: D_(25), D_(76).
    # (The tie-corrected normal approximation gave k = 24: 50 - 1.96 * 13.09 = 24.3.)
    assert shift.ci == pytest.approx((diffs[24], diffs[75]))
    assert shift.ci == pytest.approx((-0.8, 0.0))
    assert shift.coverage is not None and 0.95 <= shift.coverage < 0.96


def test_median_ci_ranks_by_hand() -> None:
    # n = 10: P(X <= 1) = 11/1024 = 0.0107 <= 0.025 < P(X <= 2) = 56/1024 -> [x_(2), x_(9)].
    assert median_ci_ranks(10, 0.05) == (2, 9)
    # n = 6: P(X <= 0) = 1/64 = 0.0156 <= 0.025 -> [x_(1), x_(6)]; n = 5: 1/32 > 0.025 -> none.
    assert median_ci_ranks(6, 0.05) == (1, 6)
    assert median_ci_ranks(5, 0.05) is None
    assert median_ci(SEED_A, 0.05) == (8.3, 9.0)
    for n in (1, 2, 3):
        assert median_ci(list(range(n)), 0.05) is None


@pytest.mark.parametrize("n", [1, 2, 3, 7, 40])
def test_summarize_against_numpy(n: int) -> None:
    values = np.random.default_rng(n).lognormal(0, 0.5, n)
    side = summarize(values, "x", 0.05)
    assert side.n == n
    assert side.median == pytest.approx(np.median(values))
    assert side.mean == pytest.approx(np.mean(values))
    assert side.std == (None if n == 1 else pytest.approx(np.std(values, ddof=1)))
    assert (side.min, side.max) == (values.min(), values.max())


def test_tukey_outliers_by_hand_and_never_dropped() -> None:
    # Q1 = 2, Q3 = 4 (numpy linear), IQR 2 -> fences [-1, 7]: only 50 is outside.
    values = [1.0, 2.0, 3.0, 4.0, 5.0, 2.0, 4.0, 3.0, 50.0]
    assert np.percentile(values, [25, 75]).tolist() == [2.0, 4.0]
    assert tukey_outliers(values) == (50.0,)
    assert summarize(values, "x", 0.05).n == len(values)


def test_nan_is_an_error_not_dropped() -> None:
    with pytest.raises(StatsError, match="NaN"):
        summarize([1.0, float("nan")], "a", 0.05)

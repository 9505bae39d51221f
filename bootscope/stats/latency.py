"""Quantiles and exceedances of latency histograms, with distribution-free intervals.

A histogram here is ``counts`` (index = latency in whole us) plus ``overflow`` (samples at or above
``len(counts)``, not resolved). Quantile rule: the p-quantile is the ``ceil(p*N)``-th smallest
sample (order statistic), N counting the overflow. Its interval is the pair of order statistics
whose ranks bound a Binomial(N, p) count with the asked confidence, so it assumes nothing about the
distribution (only independent samples). A quantile whose rank, or whose interval's upper rank,
lands in the overflow is reported as ``None`` (shown as ``> H us``). ``resolvable`` applies the rule
that N x (1 - p) must be at least 10 exceedances before a tail quantile is shown as a number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from bootscope.errors import StatsError

MIN_EXCEEDANCES = 10


def enough_exceedances(total: int, p: float) -> bool:
    """True when ``total`` samples leave at least MIN_EXCEEDANCES expected beyond the p-quantile
    (``total x (1 - p) >= 10``). Compared with a small tolerance: in binary floating point 100 x
    (1 - 0.9) is 9.999999999999998, and exactly ten must count as ten."""
    return total * (1 - p) >= MIN_EXCEEDANCES * (1 - 1e-9)


@dataclass(frozen=True, slots=True)
class QuantileEstimate:
    """The p-quantile of a histogram in us: ``value_us`` (None: in the overflow), its interval
    ``low_us``..``high_us`` (None: an end in the overflow or beyond the data) at ``confidence``;
    ``resolvable`` False when N x (1 - p) < 10."""

    p: float
    value_us: int | None
    low_us: int | None
    high_us: int | None
    confidence: float
    resolvable: bool


def _check(counts: npt.NDArray[np.int64], overflow: int) -> int:
    if counts.ndim != 1 or (counts < 0).any() or overflow < 0:
        raise StatsError("a histogram needs non-negative counts in one dimension")
    total = int(counts.sum()) + int(overflow)
    if total == 0:
        raise StatsError("the histogram is empty")
    return total


def value_at_rank(counts: npt.NDArray[np.int64], rank: int) -> int | None:
    """Return the latency (us) of the ``rank``-th smallest sample (1-based) of the histogram, None
    when that sample is in the overflow (rank above the histogram's sum). Raises StatsError for a
    rank below 1."""
    if rank < 1:
        raise StatsError(f"order statistic rank must be at least 1, not {rank}")
    cumulative = np.cumsum(counts)
    if len(cumulative) == 0 or rank > int(cumulative[-1]):
        return None
    return int(np.searchsorted(cumulative, rank, side="left"))


def order_statistic_ranks(total: int, p: float, confidence: float) -> tuple[int, int]:
    """Return 1-based ranks (l, u) with P(X_(l) <= q_p <= X_(u)) >= ``confidence`` for N = ``total``
    independent samples; u may exceed N (the upper end is then unbounded). Raises StatsError for p or
    confidence outside (0, 1)."""
    if not (0 < p < 1 and 0 < confidence < 1):
        raise StatsError("p and confidence must lie strictly between 0 and 1")
    tail = (1 - confidence) / 2
    # B = number of samples below q_p ~ Binomial(N, p); X_(l) <= q_p iff B >= l, X_(u) >= q_p iff B < u.
    low = int(sps.binom.ppf(tail, total, p))
    high = int(sps.binom.ppf(1 - tail, total, p)) + 1
    return max(low, 1), high


def histogram_quantile(
    counts: npt.NDArray[np.int64], overflow: int, p: float, confidence: float = 0.95
) -> QuantileEstimate:
    """Return the p-quantile (us) of the histogram with its distribution-free interval.
    Raises StatsError for an empty histogram or p outside (0, 1)."""
    total = _check(counts, overflow)
    ranks = order_statistic_ranks(total, p, confidence)
    rank = max(1, math.ceil(p * total))
    upper = value_at_rank(counts, ranks[1]) if ranks[1] <= total else None
    return QuantileEstimate(
        p=p,
        value_us=value_at_rank(counts, rank),
        low_us=value_at_rank(counts, ranks[0]),
        high_us=upper,
        confidence=confidence,
        resolvable=enough_exceedances(total, p),
    )


def exceedances(counts: npt.NDArray[np.int64], overflow: int, threshold_us: int) -> int:
    """Return how many samples exceed ``threshold_us`` (strictly above). The overflow counts as above
    only when the threshold lies inside the histogram; raises StatsError otherwise, since samples in
    the overflow cannot be placed against a threshold at or beyond its start."""
    _check(counts, overflow)
    if threshold_us >= len(counts) and overflow > 0:
        raise StatsError(
            f"threshold {threshold_us} us is beyond the histogram's end ({len(counts)} us): "
            "overflowed samples cannot be placed; run with a larger -h"
        )
    return int(counts[max(threshold_us + 1, 0) :].sum()) + int(overflow)


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Return the exact (Clopper-Pearson) interval for a binomial proportion k/n.
    Raises StatsError for n < 1 or k outside 0..n."""
    if n < 1 or not 0 <= k <= n:
        raise StatsError(f"need 0 <= k <= n and n >= 1, not k={k}, n={n}")
    alpha = 1 - confidence
    low = 0.0 if k == 0 else float(sps.beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(sps.beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


@dataclass(frozen=True, slots=True)
class RateRatio:
    """Exceedance rate of b over a's (``ratio``, None when a has none), its exact conditional interval
    (``low``..``high``, ``high`` None when unbounded) and two-sided exact p-value."""

    k_a: int
    n_a: int
    k_b: int
    n_b: int
    ratio: float | None
    low: float
    high: float | None
    p_value: float
    confidence: float


def rate_ratio(k_a: int, n_a: int, k_b: int, n_b: int, confidence: float = 0.95) -> RateRatio:
    """Return the ratio of exceedance rates (k_b/n_b) / (k_a/n_a) with the exact interval that
    conditions on k_a + k_b (k_b is then Binomial(k, pi), pi = n_b R / (n_b R + n_a)): Clopper-Pearson
    on pi, mapped to R. Rare exceedances make this the Poisson rate-ratio test. Raises StatsError for
    no samples or counts above the samples."""
    if n_a < 1 or n_b < 1 or not (0 <= k_a <= n_a and 0 <= k_b <= n_b):
        raise StatsError("rate ratio needs 0 <= k <= n and n >= 1 on both sides")
    k = k_a + k_b
    if k == 0:
        return RateRatio(k_a, n_a, k_b, n_b, None, 0.0, None, 1.0, confidence)
    low_pi, high_pi = clopper_pearson(k_b, k, confidence)
    scale = n_a / n_b

    def to_ratio(pi: float) -> float | None:
        return None if pi >= 1 else pi / (1 - pi) * scale

    p_value = float(sps.binomtest(k_b, k, n_b / (n_a + n_b)).pvalue)
    ratio = (k_b / n_b) / (k_a / n_a) if k_a else None
    return RateRatio(
        k_a, n_a, k_b, n_b, ratio, to_ratio(low_pi) or 0.0, to_ratio(high_pi), p_value, confidence
    )


# How many multinomial draws the exceedance-clustering test uses (seeded: the same data, the same p).
CLUSTER_DRAWS = 4000
CLUSTER_SEED = 20261123


@dataclass(frozen=True, slots=True)
class Clustering:
    """Whether exceedances cluster in some runs: ``p`` of the exact conditional test that every run
    shares one exceedance rate (small p: they do not, the exceedances bunch in some runs), the runs'
    exceedance counts in run order, and the share of all exceedances that the busiest run holds."""

    p: float
    counts: tuple[int, ...]
    busiest_share: float


def exceedance_clustering(exceeded: list[int], samples: list[int]) -> Clustering | None:
    """Test whether runs share one exceedance rate: ``exceeded[i]`` of ``samples[i]`` samples of run
    i were above the threshold. Given the total, under a common rate the counts are multinomial with
    probabilities proportional to the runs' sample counts; the statistic is Pearson's chi-square and
    ``p`` the share of CLUSTER_DRAWS seeded draws at least as large (so it holds for small counts,
    where the chi-square distribution does not). None with fewer than 2 runs or no exceedance.
    Raises StatsError for mismatched or negative inputs."""
    if len(exceeded) != len(samples) or any(k < 0 for k in exceeded) or any(n < 1 for n in samples):
        raise StatsError("need one exceedance count and a positive sample count per run")
    total = sum(exceeded)
    if len(exceeded) < 2 or total == 0:
        return None
    weights = np.asarray(samples, dtype=np.float64) / float(sum(samples))
    expected = total * weights
    observed = np.asarray(exceeded, dtype=np.float64)
    statistic = float(np.sum((observed - expected) ** 2 / expected))
    draws = np.random.default_rng(CLUSTER_SEED).multinomial(total, weights, size=CLUSTER_DRAWS)
    simulated = np.sum((draws - expected) ** 2 / expected, axis=1)
    p = float((np.sum(simulated >= statistic - 1e-9) + 1) / (CLUSTER_DRAWS + 1))
    return Clustering(p, tuple(exceeded), max(exceeded) / total)

"""One side of a comparison: median with a distribution-free interval, spread, Tukey outlier note."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats as sps

from bootscope.model import SideSummary
from bootscope.stats._checks import FloatArray, as_samples

TUKEY_K = 1.5


def median_ci_ranks(n: int, alpha: float) -> tuple[int, int] | None:
    """Return the 1-based ranks (lower, upper) of the order statistics bounding the median.

    The interval [x_(k), x_(n-k+1)] covers the population median with probability
    1 - 2 * P(Bin(n, 1/2) <= k - 1), whatever the distribution (continuous case); k is the largest
    rank keeping that coverage at or above 1 - alpha. Returns None when even [min, max] falls short
    (n <= 5 at alpha 0.05). Raises nothing.
    """
    if n < 1:
        return None
    # binom.ppf gives the smallest k with P(X <= k) >= alpha/2; step back when it overshoots.
    k = int(sps.binom.ppf(alpha / 2, n, 0.5))
    while k > 0 and sps.binom.cdf(k - 1, n, 0.5) > alpha / 2:
        k -= 1
    while sps.binom.cdf(k, n, 0.5) <= alpha / 2:
        k += 1
    if k < 1:
        return None
    return k, n - k + 1


def median_ci(values: Sequence[float] | FloatArray, alpha: float) -> tuple[float, float] | None:
    """Return the distribution-free (1 - alpha) interval of the median, in the values' unit.

    None when the sample is too small to reach that confidence. Raises StatsError on NaN/inf.
    """
    x = np.sort(as_samples(values, "x"))
    ranks = median_ci_ranks(x.size, alpha)
    if ranks is None:
        return None
    return float(x[ranks[0] - 1]), float(x[ranks[1] - 1])


def tukey_outliers(values: Sequence[float] | FloatArray) -> tuple[float, ...]:
    """Return the values outside Tukey's fences [Q1 - 1.5 IQR, Q3 + 1.5 IQR], sorted, same unit.

    Only a note for the report: no statistic in bootscope drops them. Empty for fewer than 4 values.
    Raises StatsError on NaN/inf.
    """
    x = as_samples(values, "x")
    if x.size < 4:
        return ()
    q1, q3 = np.percentile(x, [25.0, 75.0])
    iqr = q3 - q1
    low, high = q1 - TUKEY_K * iqr, q3 + TUKEY_K * iqr
    return tuple(float(v) for v in np.sort(x[(x < low) | (x > high)]))


def summarize(values: Sequence[float] | FloatArray, name: str, alpha: float) -> SideSummary:
    """Return the SideSummary of one side (n >= 1): median and its interval, mean, sample std.

    ``std`` (ddof=1) is None for a single value; ``median_ci`` is None when n is too small.
    Raises StatsError on an empty side or NaN/inf.
    """
    x = as_samples(values, name, min_n=1)
    return SideSummary(
        name=name,
        n=int(x.size),
        median=float(np.median(x)),
        median_ci=median_ci(x, alpha),
        mean=float(np.mean(x)),
        std=float(np.std(x, ddof=1)) if x.size > 1 else None,
        min=float(np.min(x)),
        max=float(np.max(x)),
        outliers=tukey_outliers(x),
        values=tuple(float(v) for v in x),
    )

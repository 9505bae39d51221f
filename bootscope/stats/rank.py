"""Rank statistics of a two-sample shift: Mann-Whitney U and the Hodges-Lehmann estimate.

The shift is always b minus a (negative: b is smaller, i.e. faster). ``alternative`` follows the
same direction: ``less`` means "b is smaller than a".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from math import comb
from typing import Literal, cast

import numpy as np
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.model import TestResult
from bootscope.stats._checks import FloatArray, as_samples
from bootscope.stats.exact_ties import (
    EXACT_TIES_MAX_TOTAL,
    observed_u2,
    tie_groups,
    tied_interval_ranks,
    tied_p_value,
)

# Exact null distributions are cheap up to here (a polynomial of degree n*m); beyond it the normal
# approximation is accurate to well under a percentage point.
EXACT_MAX_N = 50
ALTERNATIVES = ("two-sided", "less", "greater")
Alternative = Literal["two-sided", "less", "greater"]


def as_alternative(alternative: str) -> Alternative:
    """Return ``alternative`` typed for scipy; raises StatsError when it is not one of ALTERNATIVES."""
    if alternative not in ALTERNATIVES:
        raise StatsError(f"unknown alternative {alternative!r}; use one of {', '.join(ALTERNATIVES)}")
    return cast(Alternative, alternative)


@dataclass(frozen=True, slots=True)
class ShiftEstimate:
    """Hodges-Lehmann shift (b - a) with its (1 - alpha) interval; ``method`` says how it was built."""

    estimate: float
    ci: tuple[float, float] | None
    method: str
    coverage: float | None


@lru_cache(maxsize=64)
def u_null_cdf(n: int, m: int) -> tuple[float, ...]:
    """Return P(U <= u) for u = 0..n*m under H0, for samples of sizes n and m without ties.

    The counts are the coefficients of the Gaussian binomial [n+m choose n]_q, built as
    prod_{i=1..n} (1 - q^(m+i)) / (1 - q^i) in exact integers. Raises StatsError for n or m < 1.
    """
    if n < 1 or m < 1:
        raise StatsError("the Mann-Whitney distribution needs at least one value per side")
    poly = [1]
    for i in range(1, n + 1):
        step = m + i
        grown = [*poly, *([0] * step)]
        for k in range(len(grown) - 1, step - 1, -1):
            grown[k] -= grown[k - step]
        # Division by (1 - q^i) is exact: each partial product is itself a Gaussian binomial.
        for k in range(i, len(grown)):
            grown[k] += grown[k - i]
        poly = grown[: i * m + 1]
    total = comb(n + m, n)
    cdf: list[float] = []
    running = 0
    for count in poly:
        running += count
        cdf.append(running / total)
    return tuple(cdf)


def _has_ties(a: FloatArray, b: FloatArray) -> bool:
    pooled = np.concatenate([a, b])
    return bool(np.unique(pooled).size < pooled.size)


def use_exact(a: FloatArray, b: FloatArray) -> bool:
    """Return True when the exact (permutation) distribution applies: no ties, both sides <= 50."""
    return max(a.size, b.size) <= EXACT_MAX_N and not _has_ties(a, b)


def use_exact_tied(a: FloatArray, b: FloatArray) -> bool:
    """Return True when the exact distribution conditional on the ties applies: there are ties and
    both sides together have at most EXACT_TIES_MAX_TOTAL values."""
    return a.size + b.size <= EXACT_TIES_MAX_TOTAL and _has_ties(a, b)


EXACT_TIED = "exact given the ties"


def mann_whitney(
    a: Sequence[float] | FloatArray, b: Sequence[float] | FloatArray, alternative: str = "two-sided"
) -> TestResult:
    """Return the Mann-Whitney U test of b against a (statistic: U of b; p-value dimensionless).

    Exact when there are no ties and both sides have at most 50 values; with ties and at most 50
    values in all, exact conditional on the ties (``exact_ties``); otherwise the normal approximation
    with tie correction and continuity correction (scipy.stats.mannwhitneyu).
    Raises StatsError on an empty side, NaN, or an unknown alternative.
    """
    checked = as_alternative(alternative)
    x = as_samples(a, "a")
    y = as_samples(b, "b")
    method: Literal["exact", "asymptotic"] = "exact" if use_exact(x, y) else "asymptotic"
    pooled = np.concatenate([x, y])
    if np.all(pooled == pooled[0]):
        return TestResult("mann_whitney", None, alternative, method, None, "all values identical")
    if use_exact_tied(x, y):
        u2 = observed_u2(x, y)
        p = tied_p_value(tie_groups(pooled), y.size, u2, checked)
        return TestResult("mann_whitney", p, alternative, EXACT_TIED, u2 / 2.0)
    result = sps.mannwhitneyu(y, x, alternative=checked, method=method)
    return TestResult("mann_whitney", float(result.pvalue), alternative, method, float(result.statistic))


def pairwise_differences(a: FloatArray, b: FloatArray) -> FloatArray:
    """Return the sorted n*m differences b_j - a_i (unit of the values)."""
    return np.sort((b[:, None] - a[None, :]).ravel())


def _tie_corrected_u_variance(a: FloatArray, b: FloatArray) -> float:
    n, m = a.size, b.size
    total = n + m
    _, counts = np.unique(np.concatenate([a, b]), return_counts=True)
    ties = float(np.sum(counts.astype(np.float64) ** 3 - counts))
    return n * m / 12.0 * ((total + 1) - ties / (total * (total - 1)))


def hodges_lehmann(
    a: Sequence[float] | FloatArray, b: Sequence[float] | FloatArray, alpha: float
) -> ShiftEstimate:
    """Return the Hodges-Lehmann shift b - a (median of pairwise differences) and its interval.

    The (1 - alpha) interval is [D_(k), D_(nm-k+1)] over the sorted differences D, k from the exact
    Mann-Whitney null distribution when ``use_exact`` holds, from the one conditional on the ties
    when ``use_exact_tied`` holds (then the two ends may use different k: that distribution need not
    be symmetric), else from the tie-corrected normal approximation, floor(nm/2 - z * sd). ``ci`` is
    None when the samples are too small to reach that confidence. Unit: that of the values. Raises
    StatsError on an empty side or NaN.
    """
    x = as_samples(a, "a")
    y = as_samples(b, "b")
    diffs = pairwise_differences(x, y)
    estimate = float(np.median(diffs))
    total = diffs.size
    if use_exact(x, y):
        cdf = u_null_cdf(x.size, y.size)
        # Largest k with P(U <= k - 1) <= alpha / 2.
        k = int(np.searchsorted(np.asarray(cdf), alpha / 2, side="right"))
        if k < 1:
            return ShiftEstimate(estimate, None, "exact (too few samples for this alpha)", None)
        coverage = 1.0 - 2.0 * cdf[k - 1]
        method = "exact"
    elif use_exact_tied(x, y):
        pooled = np.concatenate([x, y])
        k_low, k_high, tied_coverage = tied_interval_ranks(tie_groups(pooled), y.size, x.size, alpha)
        if tied_coverage is None:
            return ShiftEstimate(estimate, None, EXACT_TIED + " (too few samples for this alpha)", None)
        ci = (float(diffs[k_low - 1]), float(diffs[total - k_high]))
        return ShiftEstimate(estimate, ci, EXACT_TIED, tied_coverage)
    else:
        variance = _tie_corrected_u_variance(x, y)
        if variance <= 0:
            return ShiftEstimate(estimate, None, "normal approximation (zero spread)", None)
        z = float(sps.norm.isf(alpha / 2))  # infinite only where alpha / 2 underflows to 0
        k_floor = float(np.floor(total / 2.0 - z * np.sqrt(variance)))  # -inf when z is infinite
        if not k_floor >= 1:
            return ShiftEstimate(estimate, None, "normal approximation (too few samples)", None)
        k = int(k_floor)
        coverage = 1.0 - alpha
        method = "normal approximation"
    return ShiftEstimate(estimate, (float(diffs[k - 1]), float(diffs[total - k])), method, coverage)

"""The sign-test reasoning of seed 000 (LKML, "rcu: Add a minimum time for marking boot as completed").

The reviewer sorted both sides, took the medians, and counted the values of a lying more than one
measurement step (0.1 s there) above b's median, and the values of b lying more than one step below
a's median: 8 of 10 each. Under "no difference" each count is Binomial(n, 1/2), so the chance of 8 or
more is sum_{i=0}^{2} C(10, i) / 2^10 = 56/1024 = 0.0547, "not quite 95 % confidence". That is a
one-sided tail: it asks whether b is faster by more than the margin. Values within the margin count
against the claim (they are not dropped, unlike the textbook sign test), which makes it conservative.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.model import TestResult
from bootscope.stats._checks import FloatArray, as_samples, value_tolerance


def resolution(*arrays: Sequence[float] | FloatArray) -> float:
    """Return the data's measurement step: the smallest gap between distinct pooled values (unit of
    the values), 0.0 when all values are equal. Values are rounded to 12 digits first so that
    8.3 - 8.2 reads as 0.1. Raises StatsError on NaN."""
    pooled = np.concatenate([as_samples(x, "x") for x in arrays])
    distinct = np.unique(np.round(pooled, 12))
    if distinct.size < 2:
        return 0.0
    return float(np.round(np.min(np.diff(distinct)), 12))


def _tail(count: int, n: int) -> float:
    # P(X >= count) for X ~ Binomial(n, 1/2).
    return float(sps.binom.sf(count - 1, n, 0.5))


def sign_test(
    a: Sequence[float] | FloatArray,
    b: Sequence[float] | FloatArray,
    margin: float | None = None,
    alternative: str = "two-sided",
) -> TestResult:
    """Return seed 000's sign test of b against a (p dimensionless, statistic: the count used).

    For ``less`` (b faster): k_a = #{a_i > median(b) + margin} out of n_a and
    k_b = #{b_j < median(a) - margin} out of n_b; p is the larger of the two binomial tails
    P(X >= k), so both of the reviewer's statements must hold. ``greater`` mirrors it. For
    ``two-sided`` the direction is taken from the medians, as the reviewer did; the reported p is
    that one-sided figure and the note gives the two-sided equivalent (twice it), which is what a
    verdict must use. ``margin`` defaults to the data's resolution (``resolution``).
    Raises StatsError on NaN, an empty side, a negative margin or an unknown alternative.
    """
    x = as_samples(a, "a")
    y = as_samples(b, "b")
    step = resolution(x, y) if margin is None else float(margin)
    if step < 0:
        raise StatsError("the sign-test margin must not be negative")
    if alternative not in ("two-sided", "less", "greater"):
        raise StatsError(f"unknown alternative {alternative!r}; use two-sided, less or greater")
    median_a, median_b = float(np.median(x)), float(np.median(y))
    tolerance = value_tolerance(x, y)
    direction = alternative
    if alternative == "two-sided":
        direction = "less" if median_b <= median_a else "greater"
    if direction == "less":
        k_a = int(np.sum(x - median_b > step + tolerance))
        k_b = int(np.sum(median_a - y > step + tolerance))
    else:
        k_a = int(np.sum(median_b - x > step + tolerance))
        k_b = int(np.sum(y - median_a > step + tolerance))
    p_a, p_b = _tail(k_a, x.size), _tail(k_b, y.size)
    p_one = max(p_a, p_b)
    count = k_a if p_a >= p_b else k_b
    n_used = x.size if p_a >= p_b else y.size
    word = "above" if direction == "less" else "below"
    note = (
        f"{k_a}/{x.size} of a {word} b's median and {k_b}/{y.size} of b "
        f"{'below' if direction == 'less' else 'above'} a's median by more than {step:g}; "
        f"P(X >= {count}), X ~ Bin({n_used}, 1/2)"
    )
    if alternative == "two-sided":
        note += f"; direction from the data, two-sided p = {min(1.0, 2.0 * p_one):.4g}"
    return TestResult("sign", p_one, direction, f"sign test, margin {step:g}", count, note)


def decision_p(result: TestResult, requested_alternative: str) -> float | None:
    """Return the p-value a verdict must use: doubled when the direction came from the data."""
    if result.p is None:
        return None
    if result.name == "sign" and requested_alternative == "two-sided":
        return min(1.0, 2.0 * result.p)
    return result.p

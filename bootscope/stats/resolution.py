"""What a set of reference samples can resolve in a one-sided Mann-Whitney margin test.

``check`` (``stats/decision.py``) calls new boots *good* when a Mann-Whitney test of (new - m)
against the reference finds them faster at level alpha, and *bad* when the opposite test finds
(new - m) slower. Whether an unchanged kernel can pass depends on m against the boots' own spread:
with a margin inside the noise, no number of boots proves "not slower by m".

The power of that test for new boots drawn like the reference's own (the reference held fixed, as
in a check) is computed, not simulated: the statistic W = #{(i, j): new_j - ref_i < m} has mean
n_ref n_new theta and variance n_ref n_new [theta (1 - theta) + (n_ref - 1)(q_new - theta^2) +
(n_new - 1)(q_ref - theta^2)] (Lehmann, Nonparametrics, 1975, section 2.3), where theta, q_new and
q_ref are read from the reference itself, over every ordered pair i != j of its samples
(distribution-free: a skewed or two-peaked boot time is taken as it is). W is compared with the
test's own critical value (exact up to 50 boots a side, as ``stats/rank.py`` tests, else normal)
and taken as normal around its mean.

- The *resolution* for n_new boots is the smallest margin whose power reaches ``power``: a check
  with that margin passes an unchanged kernel ``power`` of the time and, the difference of two
  boots being symmetric, flags a slowdown of margin + resolution ``power`` of the time.
- :func:`boots_needed` is the smallest n_new whose resolution is within a given margin.

Pure functions, deterministic: the same samples give the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from bootscope.errors import StatsError
from bootscope.stats._checks import FloatArray, as_samples
from bootscope.stats.rank import EXACT_MAX_N, u_null_cdf

DEFAULT_POWER = 0.9
MAX_BOOTS = 10_000


@dataclass(frozen=True, slots=True)
class PairMoments:
    """theta = P(new - ref < margin) and the two second moments of W's variance (0..1 each), for
    new boots drawn like the reference's, ties counted half as the rank test counts them."""

    theta: float
    q_new: float
    q_ref: float


def pair_moments(reference: Sequence[float] | FloatArray, margin: float) -> PairMoments:
    """Return the :class:`PairMoments` of ``reference`` (value unit) at ``margin`` (same unit), over
    every ordered pair of distinct samples. Raises StatsError for NaN or fewer than 2 samples."""
    x = as_samples(reference, "reference")
    if x.size < 2:
        raise StatsError("a resolution needs at least 2 reference boots")
    difference = x[:, None] - x[None, :]  # [k, i]: x_k playing a new boot, x_i the reference
    met = (difference < margin) + 0.5 * (difference == margin)
    np.fill_diagonal(met, 0.0)
    per_new = met.sum(axis=1) / (x.size - 1)
    per_ref = met.sum(axis=0) / (x.size - 1)
    return PairMoments(float(per_new.mean()), float(np.mean(per_new**2)), float(np.mean(per_ref**2)))


def critical_count(n_reference: int, n_new: int, alpha: float) -> float:
    """Return the smallest W (pairs) at which the one-sided test rejects at ``alpha``: exact
    without ties up to EXACT_MAX_N a side, else the normal approximation with continuity."""
    total = n_reference * n_new
    if max(n_reference, n_new) <= EXACT_MAX_N:
        cdf = u_null_cdf(n_reference, n_new)
        # P(W >= w) = 1 - P(W <= w - 1), decreasing in w: the first w below alpha.
        for w in range(1, total + 1):
            if 1.0 - cdf[w - 1] <= alpha:
                return float(w)
        return math.inf
    sd = math.sqrt(total * (n_reference + n_new + 1) / 12.0)
    return total / 2.0 + NormalDist().inv_cdf(1 - alpha) * sd + 0.5


def pass_power(moments: PairMoments, n_reference: int, n_new: int, alpha: float) -> float:
    """Return the probability (0..1) that ``n_new`` boots drawn like the reference's pass the test
    of (new - margin) against ``n_reference`` reference boots at ``alpha`` (``moments`` at that
    margin). Raises StatsError for fewer than 2 boots a side or alpha outside (0, 1)."""
    if n_reference < 2 or n_new < 2:
        raise StatsError("a resolution needs at least 2 reference and 2 new boots")
    if not 0 < alpha < 1:
        raise StatsError("alpha must lie between 0 and 1")
    critical = critical_count(n_reference, n_new, alpha)
    if math.isinf(critical):
        return 0.0
    theta = moments.theta
    mean = n_reference * n_new * theta
    variance = (
        n_reference
        * n_new
        * (
            theta * (1 - theta)
            + (n_reference - 1) * (moments.q_new - theta**2)
            + (n_new - 1) * (moments.q_ref - theta**2)
        )
    )
    if variance <= 1e-12:
        return 1.0 if mean >= critical else 0.0
    return 1.0 - NormalDist(mean, math.sqrt(variance)).cdf(critical - 0.5)


def _check(alpha: float, power: float) -> None:
    if not (0 < alpha < 1 and 0 < power < 1):
        raise StatsError("alpha and power must lie between 0 and 1")


def resolution(
    reference: Sequence[float] | FloatArray, n_new: int, alpha: float, power: float = DEFAULT_POWER
) -> float | None:
    """Return the smallest margin (value unit, >= 0) at which a check of ``n_new`` boots against
    ``reference`` passes boots like the reference's with probability ``power`` (see the module's
    rule); None when no margin does at these sizes (too few boots for the level). Raises StatsError
    for NaN, fewer than 2 samples a side, or alpha or power outside (0, 1)."""
    _check(alpha, power)
    x = as_samples(reference, "reference")
    if x.size < 2 or n_new < 2:
        raise StatsError("a resolution needs at least 2 reference and 2 new boots")
    spread = x[:, None] - x[None, :]
    candidates = np.unique(np.maximum(spread[~np.eye(x.size, dtype=bool)], 0.0))
    beyond = float(np.nextafter(candidates[-1], math.inf))

    def enough(margin: float) -> bool:
        return pass_power(pair_moments(x, margin), x.size, n_new, alpha) >= power

    if not enough(beyond):
        return None
    # Power grows with the margin: bisect over the pair differences, where it changes.
    low, high = 0, candidates.size  # index candidates.size stands for ``beyond``
    while low < high:
        middle = (low + high) // 2
        if enough(float(candidates[middle])):
            high = middle
        else:
            low = middle + 1
    return beyond if low == candidates.size else float(candidates[low])


def boots_needed(
    reference: Sequence[float] | FloatArray,
    margin: float,
    alpha: float,
    power: float = DEFAULT_POWER,
    max_boots: int = MAX_BOOTS,
) -> int | None:
    """Return the smallest number of new boots (>= 2) that pass boots like the reference's at
    ``margin`` (value unit) with probability ``power``; None when no count up to ``max_boots`` does
    (the reference itself is too small or too noisy for that margin). Raises StatsError as
    :func:`resolution`."""
    _check(alpha, power)
    x = as_samples(reference, "reference")
    moments = pair_moments(x, margin)

    # Scanned upwards, not bisected: power does not grow steadily with the number of new boots. The
    # exact critical count steps at each size, so power can dip as n grows (reference [1, 2], margin 1,
    # alpha 0.25: 0.327, 0.5, 0.395, 0.5 for 2..5 new boots), and a bisection can step over the smallest
    # n that is enough.
    for n_new in range(2, max_boots + 1):
        if pass_power(moments, x.size, n_new, alpha) >= power:
            return n_new
    return None

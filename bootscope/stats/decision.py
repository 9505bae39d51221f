"""The three-way regression decision shared by ``bisect-run`` and ``check``: good, bad or unknown.

It asks two one-sided questions about the shift (candidate minus baseline) against the margin
m = max(threshold x median(baseline), min_margin), each with a Mann-Whitney test of (candidate - m)
against the baseline (testing a shift against a fixed margin by moving one sample, Hollander, Wolfe &
Chicco, Nonparametric Statistical Methods, 3rd ed., section 4.1):

- bad: the candidate is slower than the baseline by more than m (alternative "greater");
- good: the candidate is slower by less than m, or faster (alternative "less");
- unknown: neither question is answered at ``alpha / looks``.

``check`` asks a third, for its report only (it never changes the verdict): :func:`p_faster`, the
candidate faster than the baseline by more than m, the same test with the sample moved the other way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bootscope.errors import StatsError
from bootscope.stats.rank import hodges_lehmann, mann_whitney

GOOD, BAD, UNKNOWN = "good", "bad", "unknown"


@dataclass(frozen=True, slots=True)
class BisectDecision:
    """One look at the samples. ``margin`` is in the metric's unit; ``shift`` is the Hodges-Lehmann
    estimate of candidate minus baseline (same unit) with its interval; p-values are unadjusted and
    ``alpha_look`` is what each must beat."""

    verdict: str
    n_baseline: int
    n_candidate: int
    margin: float
    shift: float
    shift_ci: tuple[float, float] | None
    p_bad: float | None
    p_good: float | None
    alpha_look: float


def decide(
    baseline: Sequence[float],
    candidate: Sequence[float],
    threshold: float,
    alpha: float,
    looks: int = 1,
    min_margin: float = 0.0,
) -> BisectDecision:
    """Return the verdict (good, bad or unknown) for ``candidate`` against ``baseline`` (same unit).

    ``threshold`` is a fraction of the baseline's median, ``min_margin`` the smallest margin (same
    unit: a floor for components of a few microseconds); ``alpha`` is split over ``looks``.
    Raises StatsError for fewer than 2 samples a side or NaN.
    """
    if len(baseline) < 2 or len(candidate) < 2:
        raise StatsError("a bisect decision needs at least 2 boots of the baseline and of the candidate")
    base = np.asarray(baseline, dtype=np.float64)
    cand = np.asarray(candidate, dtype=np.float64)
    margin = max(threshold * abs(float(np.median(base))), min_margin)
    alpha_look = alpha / looks
    moved = cand - margin
    p_bad = mann_whitney(base, moved, "greater").p
    p_good = mann_whitney(base, moved, "less").p
    shift = hodges_lehmann(base, cand, alpha)
    verdict = UNKNOWN
    if p_bad is not None and p_bad < alpha_look:
        verdict = BAD
    elif p_good is not None and p_good < alpha_look:
        verdict = GOOD
    return BisectDecision(
        verdict=verdict,
        n_baseline=int(base.size),
        n_candidate=int(cand.size),
        margin=margin,
        shift=shift.estimate,
        shift_ci=shift.ci,
        p_bad=p_bad,
        p_good=p_good,
        alpha_look=alpha_look,
    )


def p_faster(baseline: Sequence[float], candidate: Sequence[float], margin: float) -> float | None:
    """Return the one-sided p-value (dimensionless) of "the candidate is faster than the baseline by
    more than ``margin``" (same unit): the mirror of :func:`decide`'s bad question, a Mann-Whitney
    test of (candidate + margin) against the baseline, alternative "less". None when every value
    is the same. Raises StatsError for an empty side or NaN."""
    moved = np.asarray(candidate, dtype=np.float64) + margin
    return mann_whitney(np.asarray(baseline, dtype=np.float64), moved, "less").p

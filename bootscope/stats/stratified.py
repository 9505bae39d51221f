"""A canary cohort against a control cohort, stratum by stratum (hardware model), and pooled.

Per stratum: the Hodges-Lehmann shift (canary - control) with its interval and the Mann-Whitney p
(``rank.hodges_lehmann`` and ``rank.mann_whitney`` while the n*m pairwise differences fit in memory;
beyond that the same estimate and normal-approximation interval found by inverting the rank
statistic, which needs no pairwise differences); Holm's correction over the strata.

Pooled: van Elteren's stratified rank-sum test (each stratum's Mann-Whitney U weighted by
1 / (N_s + 1), so that no stratum dominates by size alone) and its Hodges-Lehmann-type estimate:
the common shift d at which the canary, moved by -d, no longer differs from the control in the
weighted statistic, with the interval of the d the test does not reject (van Elteren, 1960,
Bull. Int. Stat. Inst. 37; the inversion as for any rank test, Lehmann, Nonparametrics, ch. 2).
Ties enter the variance with the usual correction, computed at d = 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats._checks import FloatArray, as_samples
from bootscope.stats.multiple import holm
from bootscope.stats.rank import hodges_lehmann, mann_whitney

# Beyond this many pairwise differences per stratum (8 bytes each) the inversion is used instead.
MAX_PAIRWISE = 2_000_000
# Bisection stops when the bracket is this small relative to the values (a ns on a 1 s boot), or
# after _BISECTIONS halvings: far below any clock's step either way.
_RELATIVE_TOLERANCE = 1e-9
_BISECTIONS = 60


@dataclass(frozen=True, slots=True)
class StratumShift:
    """One stratum: sizes, the shift canary - control (unit of the values), its (1 - alpha) interval
    (None when too few boots), the two-sided Mann-Whitney p, Holm's p over the strata, the method."""

    stratum: str
    n_control: int
    n_canary: int
    shift: float
    ci: tuple[float, float] | None
    p_value: float
    p_holm: float
    method: str


@dataclass(frozen=True, slots=True)
class StratifiedShift:
    """Every stratum's shift and the pooled one (van Elteren): estimate, interval, z and p."""

    strata: tuple[StratumShift, ...]
    shift: float
    ci: tuple[float, float] | None
    z: float
    p_value: float


@dataclass(frozen=True, slots=True)
class _Stratum:
    control: FloatArray  # sorted
    canary: FloatArray  # sorted too: sorted needles make searchsorted several times faster
    weight: float
    variance: float  # of U under no shift, tie-corrected


def _u_statistic(control_sorted: FloatArray, canary: FloatArray, delta: float) -> float:
    """Mann-Whitney U of (canary - delta) against control: pairs where it is above, ties as 1/2."""
    moved = canary - delta
    below = np.searchsorted(control_sorted, moved, side="left")
    at_or_below = np.searchsorted(control_sorted, moved, side="right")
    return float(below.sum()) + 0.5 * float((at_or_below - below).sum())


def _stratum(control: FloatArray, canary: FloatArray, weighted: bool) -> _Stratum:
    n, m = control.size, canary.size
    total = n + m
    _, counts = np.unique(np.concatenate([control, canary]), return_counts=True)
    ties = float(np.sum(counts.astype(np.float64) ** 3 - counts))
    variance = n * m / 12.0 * ((total + 1) - ties / (total * (total - 1)))
    return _Stratum(np.sort(control), np.sort(canary), 1.0 / (total + 1) if weighted else 1.0, variance)


def _z(strata: Sequence[_Stratum], delta: float) -> float:
    centred = sum(
        s.weight * (_u_statistic(s.control, s.canary, delta) - s.control.size * s.canary.size / 2.0)
        for s in strata
    )
    variance = sum(s.weight**2 * s.variance for s in strata)
    return float(centred / np.sqrt(variance)) if variance > 0 else 0.0


def _solve(strata: Sequence[_Stratum], target: float, low: float, high: float) -> float:
    """The smallest-bracket d with z(d) crossing ``target`` (z falls as d grows)."""
    tolerance = _RELATIVE_TOLERANCE * max(1.0, abs(low), abs(high))
    for _ in range(_BISECTIONS):
        if high - low <= tolerance:
            break
        mid = (low + high) / 2.0
        if _z(strata, mid) > target:
            low = mid
        else:
            high = mid
    return (low + high) / 2.0


def _inverted(strata: Sequence[_Stratum], alpha: float) -> tuple[float, tuple[float, float] | None, float]:
    """Return (estimate, interval, z at d = 0) of the common shift by inverting the (weighted) test."""
    low = min(float(s.canary.min() - s.control[-1]) for s in strata) - 1.0
    high = max(float(s.canary.max() - s.control[0]) for s in strata) + 1.0
    z0 = _z(strata, 0.0)
    if sum(s.variance for s in strata) <= 0:
        return (low + high) / 2.0, None, z0
    estimate = (_solve(strata, 0.0, low, high) + _solve(strata, -1e-12, low, high)) / 2.0
    crit = float(sps.norm.isf(alpha / 2.0))
    if _z(strata, low) <= crit or _z(strata, high) >= -crit:
        return estimate, None, z0  # too few boots: even the most extreme shift is not rejected
    ci = (_solve(strata, crit, low, high), _solve(strata, -crit, low, high))
    return estimate, ci, z0


def _one_stratum(name: str, control: FloatArray, canary: FloatArray, alpha: float) -> StratumShift:
    if control.size * canary.size <= MAX_PAIRWISE:
        shift = hodges_lehmann(control, canary, alpha)
        p = mann_whitney(control, canary, "two-sided").p
        p = 1.0 if p is None else float(p)
        return StratumShift(name, control.size, canary.size, shift.estimate, shift.ci, p, p, shift.method)
    estimate, ci, z0 = _inverted([_stratum(control, canary, weighted=False)], alpha)
    p = float(2.0 * sps.norm.sf(abs(z0)))
    return StratumShift(
        name, control.size, canary.size, estimate, ci, p, p, "normal approximation (inverted)"
    )


def stratified_shift(
    groups: Mapping[str, tuple[Sequence[float] | FloatArray, Sequence[float] | FloatArray]], alpha: float
) -> StratifiedShift:
    """Return the shift canary - control per stratum and pooled over strata (van Elteren).

    ``groups`` maps a stratum's name to (control values, canary values); a stratum lacking either
    side is left out. Unit: that of the values. Raises StatsError when no stratum has both sides,
    or on NaN/inf."""
    kept = {
        name: (as_samples(control, "control"), as_samples(canary, "canary"))
        for name, (control, canary) in groups.items()
        if len(control) and len(canary)
    }
    if not kept:
        raise StatsError("no stratum holds boots of both cohorts")
    shifts = [_one_stratum(name, control, canary, alpha) for name, (control, canary) in kept.items()]
    adjusted = holm([shift.p_value for shift in shifts])
    # A p-value that underflowed to 0.0 (complete separation of some thousand boots a side) is
    # the smallest there is, not a missing one: only None becomes 1.
    shifts = [
        StratumShift(
            s.stratum,
            s.n_control,
            s.n_canary,
            s.shift,
            s.ci,
            s.p_value,
            1.0 if p is None else float(p),
            s.method,
        )
        for s, p in zip(shifts, adjusted, strict=True)
    ]
    strata = [_stratum(control, canary, weighted=True) for control, canary in kept.values()]
    estimate, ci, z0 = _inverted(strata, alpha)
    return StratifiedShift(tuple(shifts), estimate, ci, z0, float(2.0 * sps.norm.sf(abs(z0))))

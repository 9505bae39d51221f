"""Tails across repeated runs, and extreme values.

Across runs: a run's p99.9, p99.99 and max are each one observation (a run's max is one extreme
value, not a property of the kernel, so it is only compared as a sample of maxima). Each statistic
is compared with the Hodges-Lehmann / Mann-Whitney machinery of :mod:`bootscope.stats.compare`;
Holm adjusts over the statistics compared; no verdict with fewer than ``MIN_RUNS`` runs a side.

Extremes: block maxima (one per block of equal cycles, e.g. one per run) fitted with a generalized
extreme value distribution (scipy's ``genextreme``, whose ``c`` is minus the usual shape xi). The
return level for R cycles is the latency exceeded on average once per R cycles; its interval is a
seeded parametric bootstrap. xi > 0 is a heavy (Frechet) tail: return levels then grow without
bound and long extrapolations are fragile, which ``heavy_tail`` says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.model import Comparison
from bootscope.stats.compare import DEGENERATE, Options, _verdict, compare, decision_p_value
from bootscope.stats.multiple import holm

MIN_RUNS = 5
TOO_FEW = "too few runs"


def compare_run_statistics(
    baseline: Mapping[str, Sequence[float]],
    variant: Mapping[str, Sequence[float]],
    options: Options | None = None,
    names: tuple[str, str] = ("a", "b"),
) -> list[Comparison]:
    """Return one Comparison (b - a, in us) per statistic present on both sides (e.g. ``p99.9``,
    ``max``: one value per run). Holm-adjusted over the statistics; a side with fewer than
    ``MIN_RUNS`` runs gets the verdict "too few runs". Raises StatsError for no common statistic."""
    options = options or Options()
    common = [name for name in baseline if name in variant]
    if not common:
        raise StatsError("no statistic measured on both sides")
    comparisons = [
        compare(baseline[name], variant[name], name, "us", options, names[0], names[1]) for name in common
    ]
    raw = [None if c.verdict == DEGENERATE else decision_p_value(c, options.alternative) for c in comparisons]
    adjusted = holm(raw) if len(comparisons) > 1 else raw
    result = []
    for comparison, p_adj in zip(comparisons, adjusted, strict=True):
        verdict = _verdict(comparison, p_adj, options.alternative)
        if min(comparison.a.n, comparison.b.n) < MIN_RUNS:
            verdict = TOO_FEW
        correction = f"Holm over {len(comparisons)} statistics" if len(comparisons) > 1 else ""
        result.append(replace(comparison, p_adjusted=p_adj, correction=correction, verdict=verdict))
    return result


@dataclass(frozen=True, slots=True)
class GevFit:
    """A GEV fit to block maxima (us): ``shape_xi`` (> 0 heavy tail), ``loc_us``, ``scale_us``;
    ``return_levels`` maps cycles R to (level_us, low_us, high_us), exceeded once per R cycles."""

    block_cycles: int
    blocks: int
    shape_xi: float
    loc_us: float
    scale_us: float
    return_levels: dict[int, tuple[float, float, float]]
    heavy_tail: bool


def _return_level(c: float, loc: float, scale: float, blocks_per_return: float) -> float:
    return float(sps.genextreme.isf(1.0 / blocks_per_return, c, loc=loc, scale=scale))


def gev_fit(
    maxima_us: Sequence[float],
    block_cycles: int,
    return_cycles: Sequence[int] = (10**6, 10**9),
    confidence: float = 0.95,
    resamples: int = 200,
    seed: int = 1,
) -> GevFit:
    """Return the GEV fit of ``maxima_us`` (one maximum per block of ``block_cycles`` cycles) and the
    return levels for ``return_cycles`` with seeded parametric-bootstrap intervals. Raises StatsError
    for fewer than 10 maxima, maxima without spread, or return periods shorter than one block."""
    data = np.asarray(maxima_us, dtype=np.float64)
    if data.size < 10:
        raise StatsError(f"a GEV fit needs at least 10 block maxima, not {data.size}")
    if np.ptp(data) == 0:
        raise StatsError("the block maxima have no spread: no GEV fit")
    if any(r <= block_cycles for r in return_cycles):
        raise StatsError("a return period must be longer than one block")
    c, loc, scale = sps.genextreme.fit(data)
    rng = np.random.default_rng(seed)
    boot: dict[int, list[float]] = {r: [] for r in return_cycles}
    for _ in range(resamples):
        sample = sps.genextreme.rvs(c, loc=loc, scale=scale, size=data.size, random_state=rng)
        bc, bl, bs = sps.genextreme.fit(sample)
        for r in return_cycles:
            boot[r].append(_return_level(bc, bl, bs, r / block_cycles))
    tail = (1 - confidence) / 2
    levels = {
        r: (
            _return_level(c, loc, scale, r / block_cycles),
            float(np.quantile(boot[r], tail)),
            float(np.quantile(boot[r], 1 - tail)),
        )
        for r in return_cycles
    }
    return GevFit(block_cycles, int(data.size), float(-c), float(loc), float(scale), levels, bool(-c > 0))

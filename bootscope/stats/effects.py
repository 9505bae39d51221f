"""Main effects of a parameter grid: which parameter moves the metric most.

For each parameter, every level's samples are pooled over all cells that have that level (so the
other parameters are averaged out, as in a classical main-effects table of a full factorial
design), the median of each level is taken, and the parameter's effect is the spread (largest
minus smallest) of its level medians. Medians, not means: boot times have heavy right tails.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from bootscope.errors import StatsError


@dataclass(frozen=True, slots=True)
class LevelEffect:
    """One level of one parameter: pooled sample count and median (metric's unit)."""

    level: str
    n: int
    median: float


@dataclass(frozen=True, slots=True)
class ParameterEffect:
    """One parameter's levels in grid order and ``spread`` = max - min of the level medians."""

    name: str
    levels: tuple[LevelEffect, ...]
    spread: float
    best_level: str
    worst_level: str


@dataclass(frozen=True, slots=True)
class MainEffects:
    """Every parameter's effect, largest spread first; ``dominant`` names the first (None if empty)."""

    parameters: tuple[ParameterEffect, ...]
    dominant: str | None


def main_effects(
    cells: Sequence[tuple[Mapping[str, str], Sequence[float]]],
    parameter_order: Sequence[str] | None = None,
) -> MainEffects:
    """Return the main-effects table of a grid.

    ``cells`` holds (parameter name -> level, samples) per cell, samples in the metric's unit.
    Levels are kept in the order they first appear. ``best_level`` has the smallest median (boot
    time: smaller is better). Parameters with one level only have spread 0. Raises StatsError when
    the cells do not all name the same parameters or a level has no finite sample.
    """
    if not cells:
        return MainEffects(parameters=(), dominant=None)
    names = list(parameter_order) if parameter_order is not None else list(cells[0][0])
    for params, _ in cells:
        if set(params) != set(names):
            raise StatsError(f"grid cells name different parameters: {sorted(params)} vs {sorted(names)}")
    effects: list[ParameterEffect] = []
    for name in names:
        pooled: dict[str, list[float]] = {}
        for params, samples in cells:
            finite = [float(v) for v in samples if v is not None and np.isfinite(v)]
            pooled.setdefault(params[name], []).extend(finite)
        levels: list[LevelEffect] = []
        for level, values in pooled.items():
            if not values:
                raise StatsError(f"parameter {name}={level} has no usable samples")
            levels.append(LevelEffect(level=level, n=len(values), median=float(np.median(values))))
        medians = [lv.median for lv in levels]
        best = min(levels, key=lambda lv: lv.median)
        worst = max(levels, key=lambda lv: lv.median)
        effects.append(
            ParameterEffect(
                name=name,
                levels=tuple(levels),
                spread=float(max(medians) - min(medians)),
                best_level=best.level,
                worst_level=worst.level,
            )
        )
    # Stable sort keeps the grid order among parameters with equal spread.
    ordered = tuple(sorted(effects, key=lambda e: -e.spread))
    dominant = ordered[0].name if ordered and ordered[0].spread > 0 else None
    return MainEffects(parameters=ordered, dominant=dominant)

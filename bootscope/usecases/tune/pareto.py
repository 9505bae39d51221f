"""The Pareto front of saving against risk: for each risk class a user may accept (safe, then
feature, then unsafe), the knobs kept up to that class and the sum of their single savings, listed
only where accepting more risk buys more; of knobs that set the same thing (two machine types)
only the better one counts. A sum, not a measurement: knobs overlap, and only the final A/B
measures a combination."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bootscope.usecases.tune.decide import SAVING
from bootscope.usecases.tune.knob import RISKS, compatible
from bootscope.usecases.tune.screen import TriedKnob


@dataclass(frozen=True, slots=True)
class FrontPoint:
    """Accepting knobs up to ``risk``: the kept ones (names) and the sum of their single savings."""

    risk: str
    knobs: tuple[str, ...]
    saving_sum: float


def pareto_front(tried: Sequence[TriedKnob]) -> tuple[FrontPoint, ...]:
    """Return the front: one point per risk class whose kept knobs save more than the classes below
    it (none when no knob was kept)."""
    points: list[FrontPoint] = []
    best = 0.0
    for level, risk in enumerate(RISKS):
        kept = [t for t in tried if t.verdict.decision == SAVING and RISKS.index(t.knob.risk) <= level]
        chosen, _ = compatible([t.knob for t in sorted(kept, key=lambda t: -(t.verdict.saving or 0.0))])
        kept = [t for t in kept if t.knob in chosen]
        total = sum(t.verdict.saving or 0.0 for t in kept)
        if kept and total > best:
            points.append(FrontPoint(risk, tuple(t.knob.name for t in kept), total))
            best = total
    return tuple(points)

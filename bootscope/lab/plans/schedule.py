"""The order of an experiment's boots: rounds of every variant once (or as many times as the run
asks for a variant booted more often), each round shuffled by the seed.

Interleaving makes slow drift (a warming host, a neighbour's cron job) hit every variant alike; a
fixed seed makes the order reproducible, so ``--resume`` knows exactly which positions are missing.
Warm-up rounds come first.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Slot:
    """One position in the order: ``index`` counts from 1 over the whole experiment (warm-ups too);
    it is the number the progress bar shows and ``bootscope analyze --run ID --boot K`` takes."""

    index: int
    variant: str
    warmup: bool
    round: int


def build_schedule(
    variants: Sequence[str],
    samples: int,
    warmup: int,
    seed: int,
    slots_a_round: Mapping[str, int] | None = None,
) -> tuple[Slot, ...]:
    """Return ``warmup`` warm-up rounds then ``samples`` measured rounds, each round every variant once
    (a measured round: as many times as ``slots_a_round`` says for a variant it names) in an order
    shuffled with ``random.Random(seed)``; raises ValueError for negative counts."""
    if samples < 0 or warmup < 0:
        raise ValueError(f"rounds cannot be negative (samples={samples}, warmup={warmup})")
    rng = random.Random(seed)
    more = slots_a_round or {}
    slots: list[Slot] = []
    for round_number in range(warmup + samples):
        warm = round_number < warmup
        order = [name for name in variants for _ in range(1 if warm else more.get(name, 1))]
        rng.shuffle(order)
        for name in order:
            slots.append(Slot(len(slots) + 1, name, warm, round_number))
    return tuple(slots)

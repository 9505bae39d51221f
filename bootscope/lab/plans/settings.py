"""How the runner runs a plan: one typed settings object, shared by every workload's plan."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RunSettings:
    """How the runner runs a plan: ``samples_per_variant`` measured slots per variant after
    ``warmup_per_variant`` warm-up slots, in the order ``seed`` shuffles; ``jobs`` slots at once;
    ``quiet_host`` waits for an idle host and re-runs disturbed slots; ``until="precise"`` adds rounds
    (up to ``max_n``) until the stopping rule holds at ``precision`` (a fraction); ``accel`` is the
    accelerator asked for (auto, kvm, tcg)."""

    seed: int
    samples_per_variant: int
    warmup_per_variant: int = 0
    accel: str = "auto"
    jobs: int = 1
    quiet_host: bool = False
    until: str | None = None
    precision: float = 0.01
    max_n: int | None = None

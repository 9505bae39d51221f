"""What a user asks `bootscope tune` for."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bootscope.lab.plans.settings import GivenSettings


@dataclass(frozen=True, slots=True)
class TuneRequest:
    """What to tune: the kernel, the baseline command line, the metric, boots an arm and stage, the
    interval's alpha, the budget (all boots, the probe's included; None: as many as the stages
    need), the smallest saving worth having (the metric's unit; None: ``min_saving_fraction`` of the
    probe's value),
    the risk classes allowed, the knobs named with --only, the machine options every boot gets
    (smp, mem, icount, cpu), the run settings (seed, accel, jobs, timeout), the system image to
    boot (``kernel`` "" for the image's own), the command-line words asked for with --try and the
    labgrid board whose command line is tuned (``labgrid:ENV:TARGET``; None: a QEMU guest), every
    arm a kexec reboot of it, ``append`` then the board's whole baseline command line."""

    kernel: str
    append: str
    metric: str
    boots_per_arm: int
    alpha: float
    budget: int | None = None
    min_saving: float | None = None
    min_saving_fraction: float = 0.01
    allow: tuple[str, ...] = ()
    only: tuple[str, ...] = ()
    machine: Mapping[str, Any] | None = None
    settings: GivenSettings = field(default_factory=GivenSettings)
    image: str | None = None
    tries: tuple[str, ...] = ()
    board: str | None = None

"""What a user asks `bootscope tune` for."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bootscope.lab.plans.settings import GivenSettings
from bootscope.lab.where import LABGRID, LIBVIRT, SSH, Where, kind_named
from bootscope.usecases.tune.knob import MACHINE_PREFIX


@dataclass(frozen=True, slots=True)
class TuneRequest:
    """What to tune: the kernel, the baseline command line, the metric, boots an arm and stage, the
    interval's alpha, the budget (all boots, the probe's included; None: as many as the stages
    need), the smallest saving worth having (the metric's unit; None: ``min_saving_fraction`` of the
    probe's value),
    the risk classes allowed, the knobs named with --only, the machine options every boot gets
    (smp, mem, icount, cpu), the run settings (seed, accel, jobs, timeout), the system image to
    boot (``kernel`` "" for the image's own), the command-line words asked for with --try and the
    machine whose own command line is tuned (``where``: a labgrid board, a machine over SSH; None: a
    QEMU guest), every arm a reboot of it of the kind ``reboot`` names (None: kexec; a board may be
    booted ``cold``, from power-on), ``append`` then its whole baseline command line; an SSH run's
    switches ``no_checks`` (kexec -i) and ``yes_this_machine`` (this host may be rebooted)."""

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
    where: Where | None = None
    reboot: str | None = None
    no_checks: bool = False
    yes_this_machine: bool = False


# Why a kind refuses a way of rebooting each arm (the ways it takes: ``Kind.tune_reboots``)
_REFUSALS = {
    LABGRID: "a board's arms boot their own command lines by kexec or cold (from power-on); a warm"
    " reboot keeps the boot loader's line",
    LIBVIRT: "a domain's arms boot their own command lines by kexec or cold (from power-on); a warm"
    " reboot keeps its definition's line",
    SSH: "a machine over SSH is tuned by kexec reboots (its firmware's reboot keeps the boot loader's"
    " command line; a cold boot needs a labgrid board)",
}


def check_reboot(request: TuneRequest) -> None:
    """Raise InputError when ``request.reboot`` is not a way its target can boot each arm's command
    line (the kind's ``tune_reboots``)."""
    from bootscope.errors import InputError

    if request.reboot is None:
        return
    if request.where is None:
        raise InputError(
            f"--reboot {request.reboot}: only a board (labgrid:), a domain (libvirt:) or a machine (ssh://)"
            " is rebooted"
        )
    if request.reboot not in kind_named(request.where.kind).tune_reboots:
        reason = _REFUSALS.get(request.where.kind, f"a {request.where.kind} machine is not rebooted that way")
        raise InputError(f"--reboot {request.reboot}: {reason}")


# The options only a QEMU guest has: a board or a machine boots its own kernel on its own hardware
QEMU_ONLY = ("image", "smp", "mem", "icount", "accel", "jobs")


def qemu_options_given(request: TuneRequest) -> list[str]:
    """Return the names of QEMU_ONLY that ``request`` gives, in that order, then each ``--try`` word
    that names a QEMU machine property (``try machine:hpet=off``)."""
    given = []
    for name in QEMU_ONLY:
        if name == "image":
            value: object = request.image
        elif name in ("accel", "jobs"):
            value = getattr(request.settings, name)
        else:
            value = (request.machine or {}).get(name)
        if value is not None:
            given.append(name)
    return given + [f"try {word}" for word in request.tries if word.lstrip("+-").startswith(MACHINE_PREFIX)]

"""The SSH reboot use case: ``bootscope run ssh://USER@HOST[:PORT]`` options -> a validated plan -> a run.

:func:`build_ssh_plan` turns the options as given (:class:`SshOptions`) into the validated plan;
:func:`run_ssh_plan` runs it with the one runner (through :func:`bootscope.usecases.run.start_ssh`)
and summarizes it; :func:`failed_reboots` is the exit-status policy (any failed reboot is exit 3).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bootscope.errors import BootError, InputError

if TYPE_CHECKING:  # the CLI imports SshOptions at start-up: the run's machinery only when it runs
    from bootscope.lab.plans.ssh import SshPlan
    from bootscope.lab.progress import Reporter
    from bootscope.lab.runner import RunResult
    from bootscope.lab.targets.base import Target
    from bootscope.store import Store
    from bootscope.usecases.summary import RunSummary


@dataclass(frozen=True, slots=True)
class SshOptions:
    """The ``run`` options an SSH target uses, as given."""

    target: str
    reboot: str | None
    console: str | None
    console_device: Path | None
    baud: int
    identity: Path | None
    known_hosts: Path | None
    kernel: str | None
    initrd: Path | None
    append: str | None
    reuse_cmdline: bool
    no_checks: bool
    yes_this_machine: bool
    variants: tuple[str, ...]
    samples: int | None
    warmup: int | None
    seed: int | None
    timeout: float | None


def build_ssh_plan(given: SshOptions) -> SshPlan:
    """Return the validated SshPlan the options describe; raises InputError for a bad URL, key file,
    console, variant or an option that needs --reboot kexec."""
    from bootscope import defaults
    from bootscope.lab.plans.boot import resolve_seed
    from bootscope.lab.plans.ssh import (
        DEFAULT_SSH_TIMEOUT_S,
        SshPlan,
        SshVariant,
        build_ssh_variants,
        validate_ssh_plan,
    )
    from bootscope.lab.targets.ssh.serial_console import device_command
    from bootscope.lab.where import parse_where

    where = parse_where(given.target, given.identity, given.known_hosts)
    if given.console and given.console_device:
        raise InputError("give --console CMD or --console-device DEV, not both")
    console = given.console
    if given.console_device is not None:
        console = device_command(given.console_device, given.baud)
    base = SshVariant(
        name="default",
        kernel=given.kernel or "",
        initrd=str(given.initrd) if given.initrd else "",
        append=given.append or "",
        reuse_cmdline=given.reuse_cmdline,
    )
    return validate_ssh_plan(
        SshPlan(
            target=where.address,
            variants=build_ssh_variants(base, given.variants),
            reboot=given.reboot or "kexec",
            identity=where.identity,
            known_hosts=where.known_hosts,
            console=console,
            samples_per_variant=given.samples or defaults.SAMPLES_PER_VARIANT,
            warmup_per_variant=given.warmup or 0,
            seed=resolve_seed(given.seed),
            timeout_s=given.timeout or DEFAULT_SSH_TIMEOUT_S,
            no_checks=given.no_checks,
            yes_this_machine=given.yes_this_machine,
        )
    )


def run_ssh_plan(
    given: SshOptions,
    store: Store,
    reporter: Reporter | None = None,
    cancel: threading.Event | None = None,
    target: Target | None = None,
) -> tuple[RunResult, RunSummary]:
    """Build the plan of ``given``, reboot the machine (``target``: default the one the plan names)
    slot by slot, and return how the run ended with its summary. Raises like
    :func:`build_ssh_plan` and :func:`bootscope.usecases.run.start_ssh`."""
    from bootscope.usecases.run import start_ssh
    from bootscope.usecases.summary import summarize_run

    plan = build_ssh_plan(given)
    result = start_ssh(plan, store, reporter, cancel, target)
    return result, summarize_run(store, result.experiment.id)


def failed_reboots(result: RunResult, summary: RunSummary) -> BootError | None:
    """Return the error that ends the command with exit status 3 when any reboot failed or the
    machine did not come back (all are stored), None when every reboot was ok."""
    if not summary.failed:
        return None
    return BootError(
        f"{len(summary.failed)} of {summary.stored} reboots of run {result.experiment.id} failed"
        f" ({', '.join(sorted({boot.outcome for boot in summary.failed}))}); all are stored"
    )

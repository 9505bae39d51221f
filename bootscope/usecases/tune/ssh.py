"""`bootscope tune ssh://USER@HOST[:PORT]`: tune a real machine's kernel command line over SSH.

As on a board, every arm is a kexec reboot with a whole command line of its own (an SSH run's
variant with ``reuse-cmdline`` off): the baseline's is the machine's own, read from its
``/proc/cmdline`` before the probe (the boot loader's ``BOOT_IMAGE=`` left out, as a kexec reboot
of an SSH run leaves it; ``--append`` adds words), each knob's is that line with the knob's words
removed and added. The running kernel is loaded each time (``/boot/vmlinuz-RELEASE`` and its
initrd), so only the command line differs. Every stage is an SSH run labelled as any tune run, so
Ctrl-C, a crash and ``--resume`` keep and reuse every finished reboot.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from bootscope.errors import InputError
from bootscope.lab import runner
from bootscope.lab.plans.boot import Plan
from bootscope.lab.plans.ssh import (
    DEFAULT_SSH_TIMEOUT_S,
    REBOOT_KEXEC,
    SshPlan,
    SshVariant,
    validate_ssh_plan,
)
from bootscope.lab.progress import Reporter
from bootscope.lab.targets import open_target
from bootscope.lab.targets.base import Target, rebooting
from bootscope.lab.targets.ssh.serial_console import device_command
from bootscope.lab.where import SSH, Where, kind_of, parse_where
from bootscope.lab.workloads.ssh import SshWorkload
from bootscope.store import Store
from bootscope.usecases.tune.knob import words_of
from bootscope.usecases.tune.request import TuneRequest, qemu_options_given
from bootscope.usecases.tune.screen import Runner

_LOADER_WORDS = ("BOOT_IMAGE=",)  # the boot loader's, not the kernel's: a kexec reboot leaves them out


def ssh_options(
    kernel: str | None,
    console: str | None,
    console_device: Path | None,
    baud: int,
    identity: Path | None,
    known_hosts: Path | None,
    no_checks: bool,
    yes_this_machine: bool,
) -> Where | None:
    """Return the machine ``tune``'s options name (checked: its URL, key and known_hosts file; its
    console a command, or a serial device read at ``baud``), or None when ``kernel`` is not a machine
    over SSH. Raises InputError for an SSH option given without one, a bad URL, a missing file or
    device, or both console options."""
    if not kernel or kind_of(kernel).name != SSH:
        if console or console_device or identity or known_hosts or no_checks or yes_this_machine:
            raise InputError(
                "--console, --console-device, --identity, --known-hosts, --no-checks and"
                " --yes-this-machine are for a machine over SSH: give ssh://USER@HOST[:PORT]"
            )
        return None
    if console and console_device:
        raise InputError("give --console CMD or --console-device DEV, not both")
    if console_device is not None:
        console = device_command(console_device, baud)
    return parse_where(kernel, identity, known_hosts, console)


def ssh_request(request: TuneRequest, target: Target | None = None) -> TuneRequest:
    """Return ``request`` for the machine its ``where`` names, its ``append`` the machine's own command
    line (read over SSH; ``target``: that machine, a test's fake) with the words asked for added:
    the baseline every knob is applied to. Raises InputError for an option a machine has no use
    for or a bad URL, BootError when SSH refuses or the machine does not answer."""
    given = qemu_options_given(request)
    if given:
        raise InputError(f"--{given[0]} is a QEMU guest's option: a machine boots its own kernel")
    assert request.where is not None
    reached = target or open_target(request.where)
    rebooter = rebooting(reached, "tune")
    timeout_s = request.settings.timeout_s or DEFAULT_SSH_TIMEOUT_S
    rebooter.boot_id(timeout_s)  # answers SSH, or one line why not
    own = [
        w for w in words_of(rebooter.machine_facts().get("cmdline", "")) if not w.startswith(_LOADER_WORDS)
    ]
    words = own + [w for w in words_of(request.append) if w not in own]
    return replace(request, append=" ".join(words))


def ssh_plan(request: TuneRequest, plan: Plan) -> SshPlan:
    """Return the SSH run that boots ``plan``'s variants on the machine ``request`` names: each a kexec
    reboot of the running kernel with the variant's ``append`` as its whole command line, with the
    plan's seed, boots and warm-ups and ``request``'s timeout (default DEFAULT_SSH_TIMEOUT_S)."""
    machine = request.where
    assert machine is not None
    return validate_ssh_plan(
        SshPlan(
            target=machine.address,
            variants=tuple(SshVariant(v.name, append=v.append, reuse_cmdline=False) for v in plan.variants),
            reboot=REBOOT_KEXEC,
            identity=machine.identity,
            known_hosts=machine.known_hosts,
            console=machine.console,
            samples_per_variant=plan.samples_per_variant,
            warmup_per_variant=plan.warmup_per_variant,
            seed=plan.seed,
            timeout_s=request.settings.timeout_s or DEFAULT_SSH_TIMEOUT_S,
            no_checks=request.no_checks,
            yes_this_machine=request.yes_this_machine,
            slots_a_round=plan.slots_a_round,
        )
    )


def ssh_runner(
    request: TuneRequest, store: Store, reporter: Reporter | None, target: Target | None = None
) -> Runner:
    """Return the runner that reboots a tune's plan on the machine ``request`` names (``target``: that
    machine, a test's fake)."""

    def boot(plan: Plan, meta: Mapping[str, str]) -> int:
        workload = SshWorkload(ssh_plan(request, plan))
        return runner.start(workload, target, store, reporter, meta=meta).experiment.id

    return boot

"""``bootscope run ssh://USER@HOST[:PORT]``: reboot a real machine over SSH, reboot after reboot.

``run`` declares the options (one meaning per name: ``--kernel``, ``--initrd`` and ``--append`` say
what boots, here on the machine); this module builds the SSH plan from them, calls the one use case
(:func:`bootscope.usecases.run.start_ssh`) and prints the run as ``run`` prints any.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bootscope.cli.signals import stop_on_signals
from bootscope.errors import BootError, InputError
from bootscope.metrics import REBOOT_DOWNTIME_S
from bootscope.report.console import error_console, output_console

if TYPE_CHECKING:
    from bootscope.lab.progress import Reporter

Reboot = Annotated[
    str | None,
    typer.Option(
        "--reboot", help="ssh:// targets: kexec (kexec -l, then systemctl kexec) or reboot (firmware)."
    ),
]
ConsoleCmd = Annotated[
    str | None,
    typer.Option(
        "--console",
        help="ssh:// targets: a command whose output is the machine's serial console"
        " (socat - UNIX-CONNECT:PATH, ipmitool ... sol activate, picocom -b 115200 /dev/ttyUSB0).",
    ),
]
ConsoleDevice = Annotated[
    Path | None, typer.Option("--console-device", help="ssh:// targets: a serial device as the console.")
]
Baud = Annotated[int, typer.Option("--baud", help="--console-device's baud rate.")]
Identity = Annotated[
    Path | None,
    typer.Option("--identity", help="ssh:// targets: the private key (default: ssh-agent, ~/.ssh)."),
]
KnownHosts = Annotated[
    Path | None,
    typer.Option("--known-hosts", help="ssh:// targets: known_hosts file (default: ~/.ssh/known_hosts)."),
]
TargetKernel = Annotated[
    str | None,
    typer.Option("--kernel", help="ssh:// with --reboot kexec: the kernel's path on the machine."),
]
ReuseCmdline = Annotated[
    bool,
    typer.Option(
        "--reuse-cmdline/--fresh-cmdline",
        help="ssh:// with --reboot kexec: --append adds to the machine's command line (default), or is"
        " the whole command line.",
    ),
]
NoChecks = Annotated[bool, typer.Option("--no-checks", help="ssh:// with --reboot kexec: kexec -i.")]
YesThisMachine = Annotated[
    bool,
    typer.Option("--yes-this-machine", help="ssh:// targets: allow rebooting the machine bootscope runs on."),
]


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


def build_ssh_plan(given: SshOptions) -> object:
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
    from bootscope.lab.targets.serial_console import device_command
    from bootscope.lab.targets.ssh_client import parse_ssh_url

    address = parse_ssh_url(given.target, given.identity, given.known_hosts)
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
            target=address.url,
            variants=build_ssh_variants(base, given.variants),
            reboot=given.reboot or "kexec",
            identity=str(address.identity) if address.identity else None,
            known_hosts=str(address.known_hosts) if address.known_hosts else None,
            console=console,
            samples_per_variant=given.samples or defaults.SAMPLES_PER_VARIANT,
            warmup_per_variant=given.warmup or 0,
            seed=resolve_seed(given.seed),
            timeout_s=given.timeout or DEFAULT_SSH_TIMEOUT_S,
            no_checks=given.no_checks,
            yes_this_machine=given.yes_this_machine,
        )
    )


def run_ssh(given: SshOptions, db: str, as_json: bool) -> None:
    """Run the SSH experiment and print it; exit status 0 when every reboot was ok, 3 when any failed
    or the machine did not come back (the run stops; ``--resume`` continues), 2 for bad options."""
    import json

    from bootscope.lab.plans.ssh import SshPlan
    from bootscope.lab.progress import RichReporter, SilentReporter
    from bootscope.report.run_out import print_run, run_document
    from bootscope.store import Store
    from bootscope.usecases.run import start_ssh
    from bootscope.usecases.summary import summarize_run

    plan = build_ssh_plan(given)
    assert isinstance(plan, SshPlan)
    out = output_console()
    reporter: Reporter = SilentReporter() if as_json else RichReporter(error_console())
    cancel = threading.Event()
    with stop_on_signals(cancel), Store.open(db) as store:
        result = start_ssh(plan, store, reporter, cancel)
        summary = summarize_run(store, result.experiment.id)
    if as_json:
        out.print_json(json.dumps(run_document(result, summary, store.name)))
    else:
        print_run(out, result, summary, store.name, seed_given=given.seed is not None, noun="reboots")
        out.print(f"see `bootscope compare {result.experiment.id} --metric {REBOOT_DOWNTIME_S}`")
    if summary.failed:
        raise BootError(
            f"{len(summary.failed)} of {summary.stored} reboots of run {result.experiment.id} failed"
            f" ({', '.join(sorted({boot.outcome for boot in summary.failed}))}); all are stored"
        )

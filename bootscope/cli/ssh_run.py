"""``bootscope run ssh://USER@HOST[:PORT]``: reboot a real machine over SSH, reboot after reboot.

``run`` declares the options (one meaning per name: ``--kernel``, ``--initrd`` and ``--append`` say
what boots, here on the machine); this module hands them to the one use case
(:func:`bootscope.usecases.ssh.run_ssh_plan`, which builds and validates the plan and runs it) and
prints the run as ``run`` prints any.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bootscope.cli.signals import stop_on_signals
from bootscope.errors import InputError
from bootscope.metrics import REBOOT_DOWNTIME_S
from bootscope.report.console import error_console, output_console
from bootscope.usecases.ssh import SshOptions

__all__ = ["SshOptions", "run_ssh"]

if TYPE_CHECKING:
    from bootscope.lab.progress import Reporter

Reboot = Annotated[
    str | None,
    typer.Option(
        "--reboot",
        help="ssh:// targets: kexec (kexec -l, then systemctl kexec) or reboot (firmware); labgrid: targets:"
        " cold (power off, then on), warm (reboot on its shell), kexec; several, comma-separated"
        " (cold,warm,kexec), are the variants of one run.",
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


def run_ssh(given: SshOptions, db: str, as_json: bool, meta: Sequence[str] = ()) -> None:
    """Run the SSH experiment and print it; exit status 0 when every reboot was ok, 3 when any failed
    or the machine did not come back (the run stops; ``--resume`` continues), 2 for bad options
    (``--meta`` labels, which label QEMU runs only for now, among them)."""

    if meta:
        raise InputError("--meta labels QEMU runs; an ssh:// run does not take it yet")

    from bootscope.lab.progress import RichReporter, SilentReporter
    from bootscope.report.run_out import show_run
    from bootscope.store import Store
    from bootscope.usecases.run import RunOutcome
    from bootscope.usecases.ssh import failed_reboots, run_ssh_plan

    out = output_console()
    reporter: Reporter = SilentReporter() if as_json else RichReporter(error_console())
    cancel = threading.Event()
    with stop_on_signals(cancel), Store.open(db) as store:
        result, summary = run_ssh_plan(given, store, reporter, cancel)
    show_run(out, RunOutcome(result, summary, store.name, given.seed is not None), as_json, noun="reboots")
    if not as_json:
        out.print(f"see `bootscope compare {result.experiment.id} --metric {REBOOT_DOWNTIME_S}`")
    failure = failed_reboots(result, summary)
    if failure is not None:
        raise failure

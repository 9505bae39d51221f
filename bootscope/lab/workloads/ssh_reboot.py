"""One measured reboot of a machine over SSH: order it, watch SSH go and come back, read the new boot.

On the host's clock: the moment the machine confirmed the reboot order, the first SSH probe that
found it gone, the console lines of the old kernel's end and the new kernel's start (with a
console), and the end of the first SSH command that ran on the new boot (a new boot id). On the
machine's clock, once it is back: its journal and systemd's accounting
(:mod:`bootscope.lab.workloads.ssh_collect`). The result is one :class:`MeasuredReboot`, read and
classified by :mod:`bootscope.lab.workloads.ssh_timeline` (console marks, metrics, outcome): this
module does the reboot, that one says what its stamps mean.

Ctrl-C while a reboot is under way does not stop it half-way: the reboot is finished and stored,
and the interrupt is raised afterwards (see :attr:`MeasuredReboot.interrupted`).
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bootscope import defaults
from bootscope.errors import BootError
from bootscope.lab.plans.ssh import REBOOT_KEXEC, SshPlan, SshVariant
from bootscope.lab.targets.base import Reboots, ShellResult
from bootscope.lab.targets.reboot_commands import kexec_load_command, order_command
from bootscope.lab.targets.ssh.client import first_error_line, refusal
from bootscope.lab.targets.ssh.machine import PROBE_CONNECT_S, PROBE_PAUSE_S, PROBE_TIMEOUT_S, boot_id_command
from bootscope.lab.workloads.ssh_collect import (
    Collected,
    collect_command,
    parse_collected,
    stored_console,
    stored_lines,
)
from bootscope.lab.workloads.ssh_timeline import (
    ConsoleMarks,
    Timeline,
    classify,
    console_marks,
    reboot_metrics,
)
from bootscope.metrics import INITRD_S, KERNEL_INIT_S, SYSTEMD_USERSPACE_S
from bootscope.model import Boot, LogLine, Outcome
from bootscope.parse.patterns import PANIC_RE

__all__ = [
    "ConsoleMarks",
    "MeasuredReboot",
    "Timeline",
    "classify",
    "console_marks",
    "kexec_load_command",
    "load_command",
    "measure_reboot",
    "order_command",
    "reboot_metrics",
]

PANIC_GRACE_S = 60.0  # after a panic on the console, wait this long for a reboot (panic=N)
JOURNAL_METRICS = (KERNEL_INIT_S, INITRD_S, SYSTEMD_USERSPACE_S)


@dataclass(frozen=True, slots=True)
class MeasuredReboot:
    """One reboot as stored: outcome, reason, metrics (s), the stored log, the new kernel's release,
    the command that ordered it, the order's host stamp, whether the run must stop (the machine is
    unreachable) and whether Ctrl-C came while it ran."""

    outcome: Outcome
    reason: str
    metrics: dict[str, float | None]
    lines: list[LogLine]
    release: str | None
    command: tuple[str, ...]
    ordered_ns: int | None
    stop_run: bool = False
    interrupted: bool = False


def load_command(plan: SshPlan, variant: SshVariant, root: str) -> str:
    """Return the shell command that loads ``variant``'s kernel with kexec-tools: its kernel and
    initrd (default: the running kernel's files in /boot, the initrd only where it exists) and its
    command line (the run's base command line plus ``append``, or ``append`` alone)."""
    base = " ".join(w for w in (plan.base_cmdline or "").split() if not w.startswith("BOOT_IMAGE="))
    cmdline = f"{base} {variant.append}".strip() if variant.reuse_cmdline else variant.append.strip()
    return kexec_load_command(variant.kernel, variant.initrd, shlex.quote(cmdline), plan.no_checks, root)


def measure_reboot(
    machine: Reboots,
    plan: SshPlan,
    variant: SshVariant,
    cancelled: Callable[[], bool],
) -> MeasuredReboot:
    """Reboot the machine once as ``plan`` and ``variant`` say and return the measurement. Raises
    KeyboardInterrupt before ordering the reboot when ``cancelled()``, BootError when SSH refuses the
    machine (host key, key) before the reboot; never leaves a reboot half-way for Ctrl-C."""
    root = machine.root_prefix
    url = machine.url
    command: tuple[str, ...] = ("ssh", url)
    try:
        before = machine.boot_id(plan.timeout_s)
    except BootError as error:
        if "does not answer" not in str(error):
            raise
        tail = _console_tail(machine.console_since(time.monotonic_ns() - int(plan.timeout_s * 1e9)))
        reason = f"{error} (before the reboot was ordered)" + (f"; last console line: {tail}" if tail else "")
        return MeasuredReboot(Outcome.TIMEOUT, reason, {}, [], None, command, None, stop_run=True)
    if cancelled():
        raise KeyboardInterrupt
    if variant.setup:
        done = machine.run(variant.setup, plan.timeout_s)
        if not done.ok:
            reason = f"setup command failed: {first_error_line(done)}"
            return MeasuredReboot(Outcome.REBOOT_ERROR, reason, {}, [], None, command, None)
    if plan.reboot == REBOOT_KEXEC:
        loading = load_command(plan, variant, root)
        loaded = machine.run(loading, plan.timeout_s)
        command = (*command, loading)
        if not loaded.ok:
            reason = f"kexec -l failed: {first_error_line(loaded)}"
            return MeasuredReboot(Outcome.KEXEC_ERROR, reason, {}, [], None, command, None)
    ordering = order_command(plan.reboot, root)
    command = (*command, ordering)
    if cancelled():
        raise KeyboardInterrupt
    ordered = machine.run(ordering, plan.timeout_s)
    if not ordered.ok:
        reason = f"the reboot order failed: {first_error_line(ordered)}"
        return MeasuredReboot(Outcome.REBOOT_ERROR, reason, {}, [], None, command, None)
    return _after_order(machine, plan, before, ordered, command)


def _after_order(
    machine: Reboots, plan: SshPlan, before: str, ordered: ShellResult, command: tuple[str, ...]
) -> MeasuredReboot:
    """Wait for the machine to go and come back, then read the new boot; Ctrl-C is held until the
    reboot is stored."""
    interrupted = False
    down_ns: int | None = None
    back_ns: int | None = None
    panic_line: str | None = None
    refused: str | None = None
    deadline_ns = ordered.ended_ns + int(plan.timeout_s * 1e9)
    while True:
        try:
            if time.monotonic_ns() >= deadline_ns:
                break
            probe = machine.run(boot_id_command(), PROBE_TIMEOUT_S, PROBE_CONNECT_S)
            now_id = probe.stdout.strip()
            if probe.ok and now_id and now_id != before:
                back_ns = probe.ended_ns
                break
            refused = refusal(probe)
            if refused is not None:
                break  # a new host key (or key) after the reboot: retrying cannot help
            if not probe.ok and down_ns is None:
                down_ns = probe.started_ns
            if panic_line is None:
                panic_line = _panic(machine.console_since(ordered.started_ns))
                if panic_line is not None:
                    deadline_ns = min(deadline_ns, time.monotonic_ns() + int(PANIC_GRACE_S * 1e9))
            time.sleep(PROBE_PAUSE_S)
        except KeyboardInterrupt:
            interrupted = True  # the reboot is under way: finish and store it first
    collected: Collected | None = None
    collect_error: str | None = None
    while back_ns is not None:
        try:
            wait_s = max(1, round(plan.timeout_s))
            result = machine.run(collect_command(wait_s), plan.timeout_s + 30)
            if result.ok:
                collected = parse_collected(result.stdout, machine.host)
            else:
                collect_error = first_error_line(result)
            break
        except KeyboardInterrupt:
            interrupted = True
    console = machine.console_since(ordered.started_ns)
    panic_line = panic_line or _panic(console)
    outcome, reason = classify(
        came_back=back_ns is not None,
        timeout_s=plan.timeout_s,
        panic_line=panic_line,
        collected=collected,
        collect_error=collect_error,
        console_tail=_console_tail(console),
    )
    if refused is not None:
        outcome, reason = Outcome.REBOOT_ERROR, f"after the reboot order SSH refused the machine: {refused}"
    lost = machine.console_lost()
    if lost is not None:
        reason = "; ".join(part for part in (reason, f"console: {lost}, no console lines after that") if part)
    timeline = Timeline(ordered.ended_ns, down_ns, back_ns, console_marks(console))
    metrics = reboot_metrics(timeline, plan.reboot == REBOOT_KEXEC)
    release = collected.facts.get("release") if collected is not None else None
    if collected is not None and collected.log:
        lines = stored_lines(collected, console)
        journal, release_seen, note = _journal_metrics(lines, ordered.ended_ns, release)
        metrics |= journal
        release = release or release_seen
        reason = "; ".join(part for part in (reason, note) if part)
    else:
        lines = stored_console(console)
    machine.forget_console_before(ordered.started_ns)
    return MeasuredReboot(
        outcome=outcome,
        reason=reason,
        metrics=metrics,
        lines=lines,
        release=release,
        command=command,
        ordered_ns=ordered.ended_ns,
        stop_run=back_ns is None,
        interrupted=interrupted,
    )


def _journal_metrics(
    lines: list[LogLine], ordered_ns: int, release: str | None
) -> tuple[dict[str, float | None], str | None, str]:
    """The new boot's kernel and userspace metrics, read by the one stored-boot analysis."""
    from bootscope.analyze.captured import measure  # the one reading of a captured boot

    boot = Boot(lines=tuple(lines), outcome=Outcome.OK, host_start_ns=ordered_ns)
    metrics, release_seen, note = measure(
        boot, defaults.MARKER_PREFIX, release, JOURNAL_METRICS, full_userspace=True
    )
    return {k: v for k, v in metrics.items() if v is not None}, release_seen, note


def _panic(lines: Sequence[LogLine]) -> str | None:
    return next((line.text.strip() for line in lines if PANIC_RE.search(line.text)), None)


def _console_tail(lines: Sequence[LogLine]) -> str | None:
    texts = [line.text.strip() for line in lines if line.text.strip()]
    return texts[-1] if texts else None

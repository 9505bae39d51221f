"""One measured reboot of a machine over SSH: order it, watch SSH go and come back, read the new boot.

On the host's clock: the moment the machine confirmed the reboot order, the first SSH probe that
found it gone, the console lines of the old kernel's end and the new kernel's start (with a
console), and the end of the first SSH command that ran on the new boot (a new boot id). On the
machine's clock, once it is back: its journal and systemd's accounting
(:mod:`bootscope.lab.workloads.ssh_collect`). The result is one :class:`MeasuredReboot`, classified by
:func:`classify` into an outcome with its reason.

Ctrl-C while a reboot is under way does not stop it half-way: the reboot is finished and stored,
and the interrupt is raised afterwards (see :attr:`MeasuredReboot.interrupted`).
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from bootscope import defaults
from bootscope.errors import BootError
from bootscope.lab.plans.ssh import REBOOT_KEXEC, SshPlan, SshVariant
from bootscope.lab.targets.serial_console import ConsoleReader
from bootscope.lab.targets.ssh_client import SshAddress, SshResult, first_error_line, refusal, run_ssh
from bootscope.lab.workloads.ssh_collect import (
    BANNER_RE,
    Collected,
    boot_id_command,
    collect_command,
    parse_collected,
    stored_console,
    stored_lines,
)
from bootscope.metrics import (
    INITRD_S,
    KERNEL_INIT_S,
    KEXEC_DOWNTIME_S,
    REBOOT_BLIND_S,
    REBOOT_DOWNTIME_S,
    REBOOT_SHUTDOWN_S,
    REBOOT_STOP_S,
    SYSTEMD_USERSPACE_S,
)
from bootscope.model import Boot, LogLine, Outcome
from bootscope.parse.patterns import PANIC_RE

PROBE_TIMEOUT_S = 30.0  # one probe may take this long (a TCG guest on a busy host is slow to answer)
PROBE_CONNECT_S = 15.0  # TCP connect and the SSH banner: a busy TCG guest sent its banner after 3 s
PROBE_PAUSE_S = 0.3
PANIC_GRACE_S = 60.0  # after a panic on the console, wait this long for a reboot (panic=N)
CONSOLE_SETTLE_S = 1.0  # a console command that ends this soon never reached the console
# init/main.c run_init_process() logs "Run %s as init process" as the kernel hands over to init.
_INIT_RE = re.compile(r"Run \S+ as init process")
_PRINTK_STAMP_RE = re.compile(r"\[\s*(\d+\.\d+)\]")
JOURNAL_METRICS = (KERNEL_INIT_S, INITRD_S, SYSTEMD_USERSPACE_S)


class SshMachine:
    """A machine reached over SSH, with its console read for the whole run when a command is given."""

    def __init__(self, address: SshAddress, console: str | None = None) -> None:
        self.address = address
        self.console = ConsoleReader(console) if console else None

    @property
    def root_prefix(self) -> str:
        """``sudo -n `` for a user other than root (never asks for a password), else nothing."""
        return "" if self.address.user == "root" else "sudo -n "

    def start(self) -> None:
        """Start reading the console (if any). Raises BootError if its command cannot start or ends
        within CONSOLE_SETTLE_S (a wrong socket path, a device that cannot be opened)."""
        if self.console is None:
            return
        self.console.start()
        deadline = time.monotonic() + CONSOLE_SETTLE_S
        while time.monotonic() < deadline and self.console.ended is None:
            time.sleep(0.05)
        if self.console.ended is not None:
            raise BootError(
                f"--console {self.console.command!r}: {self.console.ended} at once; try the command"
                " by hand: it must keep printing the machine's console"
            )

    def console_lost(self) -> str | None:
        """Why the console stopped being read during the run (its command ended), or None."""
        return None if self.console is None else self.console.ended

    def stop(self) -> None:
        """Stop reading the console; safe to call twice."""
        if self.console is not None:
            self.console.stop()

    def run(self, command: str, timeout_s: float, connect_timeout_s: float | None = None) -> SshResult:
        """Run ``command`` on the machine (see :func:`bootscope.lab.targets.ssh_client.run_ssh`)."""
        return run_ssh(self.address, command, timeout_s, connect_timeout_s)

    def console_since(self, host_ns: int) -> list[LogLine]:
        """Return the console lines that arrived since ``host_ns`` (none without a console)."""
        return self.console.lines_since(host_ns) if self.console is not None else []

    def boot_id(self, timeout_s: float) -> str:
        """Return the running boot's id, waiting up to ``timeout_s`` for SSH to answer. Raises
        BootError at once for a refusal (host key, key) and after ``timeout_s`` if it never answers."""
        deadline = time.monotonic() + timeout_s
        while True:
            result = self.run(boot_id_command(), PROBE_TIMEOUT_S, PROBE_CONNECT_S)
            why = refusal(result)
            if why is not None:
                raise BootError(f"{self.address.url}: {why}")
            if result.ok and result.stdout.strip():
                return result.stdout.strip()
            if time.monotonic() >= deadline:
                raise BootError(
                    f"{self.address.url} does not answer SSH ({first_error_line(result)}) after"
                    f" {timeout_s:g} s"
                )
            time.sleep(PROBE_PAUSE_S)


@dataclass(frozen=True, slots=True)
class ConsoleMarks:
    """Host stamps (ns) on the console: the old kernel's last line before the new kernel's banner,
    the banner (the new kernel's first line) and the new kernel's 'Run /init as init process', with
    that line's own printk time (s) where the console shows it."""

    last_old_ns: int | None = None
    banner_ns: int | None = None
    init_ns: int | None = None
    init_printk_s: float | None = None

    @property
    def kernel_zero_ns(self) -> int | None:
        """The host time of the new kernel's printk time zero: the init line's arrival less its
        printk time (None without both)."""
        if self.init_ns is None or self.init_printk_s is None:
            return None
        return self.init_ns - round(self.init_printk_s * 1e9)


def console_marks(lines: Sequence[LogLine]) -> ConsoleMarks:
    """Return the marks of the last kernel start in ``lines`` (console lines since the order)."""
    banner = max((i for i, line in enumerate(lines) if BANNER_RE.search(line.text)), default=None)
    if banner is None:
        return ConsoleMarks()
    init = next((line for line in lines[banner:] if _INIT_RE.search(line.text)), None)
    stamp = _PRINTK_STAMP_RE.search(init.text) if init is not None else None
    last_old = lines[banner - 1].host_ns if banner > 0 else None
    return ConsoleMarks(
        last_old_ns=last_old,
        banner_ns=lines[banner].host_ns,
        init_ns=None if init is None else init.host_ns,
        init_printk_s=float(stamp.group(1)) if stamp else None,
    )


@dataclass(frozen=True, slots=True)
class Timeline:
    """The host's stamps of one reboot (monotonic ns; None where it did not happen or was not seen)."""

    ordered_ns: int | None = None
    down_ns: int | None = None
    back_ns: int | None = None
    marks: ConsoleMarks = field(default_factory=ConsoleMarks)


def reboot_metrics(timeline: Timeline, kexec: bool) -> dict[str, float | None]:
    """Return the reboot's host-clock metrics in seconds (see the registry for their definitions)."""

    def span(start: int | None, end: int | None) -> float | None:
        return None if start is None or end is None or end < start else round((end - start) / 1e9, 6)

    marks = timeline.marks
    metrics = {
        REBOOT_DOWNTIME_S: span(timeline.ordered_ns, timeline.back_ns),
        REBOOT_SHUTDOWN_S: span(timeline.ordered_ns, timeline.down_ns),
        REBOOT_STOP_S: span(timeline.ordered_ns, marks.last_old_ns),
        REBOOT_BLIND_S: span(marks.last_old_ns, marks.kernel_zero_ns),
    }
    if kexec:
        metrics[KEXEC_DOWNTIME_S] = span(timeline.marks.last_old_ns, timeline.marks.init_ns)
    return {name: value for name, value in metrics.items() if value is not None}


def classify(
    *,
    came_back: bool,
    timeout_s: float,
    panic_line: str | None,
    collected: Collected | None,
    collect_error: str | None,
    console_tail: str | None,
) -> tuple[Outcome, str]:
    """Return the outcome of a reboot that was ordered, and its reason: ``panic`` when the console
    showed one, ``timeout`` when SSH did not come back in time (with the console's last line),
    ``log-missing`` when it came back but its journal lacks this boot or could not be read, else ok."""
    if panic_line is not None:
        where = "" if came_back else f"; SSH did not come back within {timeout_s:g} s"
        return Outcome.PANIC, f"the console showed: {panic_line[:200]}{where}"
    if not came_back:
        tail = f"; last console line: {console_tail[:200]}" if console_tail else ""
        return Outcome.TIMEOUT, f"SSH did not come back within {timeout_s:g} s of the reboot order{tail}"
    if collected is None:
        return Outcome.LOG_MISSING, f"SSH came back, but reading the boot failed: {collect_error}"
    if not collected.log:
        return Outcome.LOG_MISSING, "SSH came back, but neither journalctl nor dmesg printed this boot's log"
    if not collected.has_start:
        return Outcome.LOG_MISSING, (
            f"the {collected.source or 'kernel log'} lacks this boot's start (no 'Linux version' line):"
            " the kernel's ring buffer wrapped before the journal read it; raise log_buf_len="
        )
    return Outcome.OK, ""


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
    kernel = shlex.quote(variant.kernel) if variant.kernel else '"/boot/vmlinuz-$(uname -r)"'
    initrd = shlex.quote(variant.initrd) if variant.initrd else '"/boot/initrd.img-$(uname -r)"'
    base = " ".join(w for w in (plan.base_cmdline or "").split() if not w.startswith("BOOT_IMAGE="))
    cmdline = f"{base} {variant.append}".strip() if variant.reuse_cmdline else variant.append.strip()
    use_initrd = "true" if variant.initrd else '[ -e "$i" ]'
    checks = " -i" if plan.no_checks else ""
    return (
        f'k={kernel}; i={initrd}; set --; if {use_initrd}; then set -- --initrd="$i"; fi; '
        f'{root}kexec -l "$k" "$@" --command-line={shlex.quote(cmdline)}{checks}'
    )


def order_command(reboot: str, root: str) -> str:
    """Return the shell command that orders the reboot and returns at once: systemd's clean
    ``kexec``/``reboot`` where systemd runs, else ``kexec -e``/``reboot`` a second later."""
    verb, bare = ("kexec", "kexec -e") if reboot == REBOOT_KEXEC else ("reboot", "reboot")
    return (
        f"if [ -d /run/systemd/system ]; then {root}systemctl --no-block {verb}; "
        f"else {root}sh -c 'nohup sh -c \"sleep 1; {bare}\" >/dev/null 2>&1 &'; fi"
    )


def measure_reboot(
    machine: SshMachine,
    plan: SshPlan,
    variant: SshVariant,
    cancelled: Callable[[], bool],
) -> MeasuredReboot:
    """Reboot the machine once as ``plan`` and ``variant`` say and return the measurement. Raises
    KeyboardInterrupt before ordering the reboot when ``cancelled()``, BootError when SSH refuses the
    machine (host key, key) before the reboot; never leaves a reboot half-way for Ctrl-C."""
    root = machine.root_prefix
    url = machine.address.url
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
    machine: SshMachine, plan: SshPlan, before: str, ordered: SshResult, command: tuple[str, ...]
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
                collected = parse_collected(result.stdout, machine.address.host)
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
    if machine.console is not None:
        machine.console.forget_before(ordered.started_ns)
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

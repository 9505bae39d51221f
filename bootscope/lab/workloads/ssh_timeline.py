"""What a reboot's stamps and reads mean: the console's marks, the host-clock metrics, the outcome.

:mod:`bootscope.lab.workloads.ssh_reboot` does a reboot (orders it, watches SSH go and come back,
reads the new boot); this module reads what it saw, as pure functions tested without a machine:
:func:`console_marks` finds the old kernel's end and the new kernel's start on the console,
:func:`reboot_metrics` turns the host's stamps into seconds, :func:`classify` names the outcome.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bootscope.lab.workloads.ssh_collect import Collected
from bootscope.metrics import (
    KEXEC_DOWNTIME_S,
    REBOOT_BLIND_S,
    REBOOT_DOWNTIME_S,
    REBOOT_SHUTDOWN_S,
    REBOOT_STOP_S,
)
from bootscope.model import LogLine, Outcome
from bootscope.parse.patterns import CONSOLE_BANNER_RE, CONSOLE_RUN_INIT_RE, PRINTK_STAMP_RE
from bootscope.parse.reboot_start import new_boot_start


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
    banner = max((i for i, line in enumerate(lines) if CONSOLE_BANNER_RE.search(line.text)), default=None)
    if banner is None:
        return ConsoleMarks()
    init = next((line for line in lines[banner:] if CONSOLE_RUN_INIT_RE.search(line.text)), None)
    stamp = PRINTK_STAMP_RE.search(init.text) if init is not None else None
    start = new_boot_start(lines)
    last_old = lines[start - 1].host_ns if start else None
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

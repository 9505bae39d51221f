"""Early cycle-counter stamps: printk times before timekeeping, counted from the counter's start.

Before the kernel's timekeeping starts (time_init()), printk stamps are zero: a blind spot of 17 to
1700 ms on embedded machines. Tim Bird's printk series of 2025-2026 ("printk: add early_counter_ns
routine for printk blind spot", then "printk: fix zero-valued printk timestamps in early boot",
linux-kernel and linux-embedded lists) stamps those lines from the cycle counter (the TSC,
cntvct_el0) instead, counted from the counter's start (about power-on, or a virtual machine's
start), with one jump back when timekeeping starts: a Hyper-V guest's early lines were stamped
27.99 s (Michael Kelley's reply of 11 March 2026, tests/data/bootloader).

A boot has such stamps when its first stamped line is its banner (or arm's CPU line just before
it) stamped above zero and a later line is stamped below it. The lines before that restart carry
the counter's time; the boot's own clock starts at the restart. Boot splitting (stream.py,
chunked.py) treats the restart as neither a new boot nor a step back; the analysis
(bootscope.analyze.breakdown) puts the early lines at zero on the kernel's clock, where a kernel
without the patches stamps them, and reports their counter stamps apart.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from bootscope.parse.columns import BootColumns
from bootscope.prekernel import EarlyCounter

if TYPE_CHECKING:
    from bootscope.parse.columns import Floats

BANNER = "Linux version "
# arm/arm64 smp_setup_processor_id(): printed just before the banner, so part of the banner's boot
CPU_LINE = "Booting Linux on physical CPU "
# A stamp at or below this is "clock zero": printk's clock has not started to count yet.
CLOCK_ZERO_S = 1e-6


def starts_early(first_text: str, first_s: float) -> bool:
    """Whether a boot whose first stamped line is ``first_text`` at ``first_s`` may carry early
    cycle-counter stamps (its banner or arm's CPU line, stamped above zero)."""
    return first_s > CLOCK_ZERO_S and first_text.startswith((BANNER, CPU_LINE))


def restart_at(times: Floats, first_text: str) -> int | None:
    """Return the index of the first stamp below the boot's first (the kernel's clock restarting)
    when the boot starts early (see :func:`starts_early`), else None."""
    if len(times) < 2 or not starts_early(first_text, float(times[0])):
        return None
    first = float(times[0])
    return next((index for index, t in enumerate(times) if t < first), None)


def split_early(cols: BootColumns) -> tuple[BootColumns, EarlyCounter | None]:
    """Return the boot's columns on the kernel's own clock and its early counter lines (None when it
    has none). On the kernel's clock the early lines are at zero, where a kernel without the early
    counter stamps them, so that the analysis of the rest is the same as without it."""
    if not len(cols.timed_index):
        return cols, None
    at = restart_at(cols.timed_s, cols.line(int(cols.timed_index[0])).text)
    if at is None:
        return cols, None
    early = [float(t) for t in cols.timed_s[:at]]
    counter = EarlyCounter(
        lines=at, kernel_start_s=early[0], last_s=max(early), restart_s=float(cols.timed_s[at])
    )
    times = cols.timed_s
    if isinstance(times, list):
        zeroed: Floats = [0.0] * at + times[at:]
    else:
        zeroed = times.copy()
        zeroed[:at] = 0.0
    first_line = int(cols.timed_index[at])
    known = [
        (name, index, groups, 0.0 if index < first_line and t is not None else t)
        for name, index, groups, t in cols.known
    ]
    return replace(cols, timed_s=zeroed, known=known), counter

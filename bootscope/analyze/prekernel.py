"""What a boot's lines show before the kernel's own clock: U-Boot's bootstage report among the lines
before the kernel's first stamped line, and the metrics of that report and of the kernel's early
cycle-counter lines (bootscope.parse.early_counter finds those)."""

from __future__ import annotations

from dataclasses import replace

from bootscope.metrics import BEFORE_TIMEKEEPING_S, BOOTLOADER_HANDOFF_S, EARLY_KERNEL_START_S
from bootscope.parse.bootstage import read_bootstage
from bootscope.parse.columns import BootColumns
from bootscope.prekernel import BootstageReport, EarlyCounter

# The boot loader prints its report just before it starts the kernel: the lines read for it are at
# most this many, those right before the kernel's first stamped line.
PRELUDE_MAX_LINES = 5000


def read_prelude(cols: BootColumns, first_index: int | None) -> BootstageReport | None:
    """Return the bootstage report among the boot's lines before line ``first_index`` (its first
    stamped line; None: every line), or None when they hold none. ``line_index`` counts from the
    boot's first line."""
    end = cols.line_count if first_index is None else first_index
    start = max(0, end - PRELUDE_MAX_LINES)
    report = read_bootstage(cols.line(index).text for index in range(start, end))
    return None if report is None else replace(report, line_index=report.line_index + start)


def prekernel_metrics(
    bootstage: BootstageReport | None, early: EarlyCounter | None
) -> dict[str, float | None]:
    """Return the boot's metrics from before the kernel's clock (None where the boot shows none)."""
    return {
        BOOTLOADER_HANDOFF_S: None if bootstage is None else bootstage.handoff_s,
        EARLY_KERNEL_START_S: None if early is None else early.kernel_start_s,
        BEFORE_TIMEKEEPING_S: None if early is None else early.before_timekeeping_s,
    }

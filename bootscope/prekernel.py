"""What a boot's console shows before the kernel's own clock: the boot loader's stages (U-Boot's
``bootstage`` report, on the boot loader's timer from reset) and the kernel's early cycle-counter
stamps (lines stamped before timekeeping, on a counter from about power-on). Plain data shared by
the parsers that read them (bootscope.parse.bootstage, bootscope.parse.early_counter), the analysis
and the reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

KERNEL_STAGE = "start_kernel"
UBOOT = "u-boot"
BAREBOX = "barebox"


@dataclass(frozen=True, slots=True)
class Stage:
    """One mark of a bootstage report: its name (empty when U-Boot printed none), the time from
    reset (s) and since the previous mark (s; None where U-Boot printed none or ``overflow``)."""

    name: str
    mark_s: float
    elapsed_s: float | None


@dataclass(frozen=True, slots=True)
class BootstageReport:
    """A boot loader's timed stages: U-Boot's bootstage report (its marks in the order printed, its
    accumulated times (name, s), the record count U-Boot stated, None in old U-Boots), or barebox's
    log buffer printed with its times (each message a mark); the index of its first line."""

    stages: tuple[Stage, ...]
    accumulated: tuple[tuple[str, float], ...]
    records_stated: int | None
    line_index: int
    loader: str = UBOOT  # or BAREBOX: its log buffer printed with times (``dmesg -t``)

    @property
    def handoff_s(self) -> float:
        """Seconds from reset to ``start_kernel`` when the report has that mark, else to its last
        mark (the report is printed just before the OS starts)."""
        for stage in self.stages:
            if stage.name == KERNEL_STAGE:
                return stage.mark_s
        return max(stage.mark_s for stage in self.stages)

    @property
    def went_backwards(self) -> bool:
        """True when a mark is earlier than the one before it (a timer that wrapped or restarted)."""
        marks = [stage.mark_s for stage in self.stages]
        return any(later < earlier for earlier, later in pairwise(marks))


@dataclass(frozen=True, slots=True)
class EarlyCounter:
    """The early cycle-counter lines of a boot: how many, the first one's stamp (s from the
    counter's start to the kernel's first line), the last one's (s), and the stamp the kernel's
    own clock restarted at (s)."""

    lines: int
    kernel_start_s: float
    last_s: float
    restart_s: float

    @property
    def before_timekeeping_s(self) -> float:
        """Seconds the kernel ran on the early counter before timekeeping started, as its stamps
        show (from its first line to its last early line)."""
        return self.last_s - self.kernel_start_s

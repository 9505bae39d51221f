"""One analysed boot -> its components: the parts whose times ``diff`` compares between variants.

A component is (kind, name) with a duration in seconds: each phase, each initcall by name (calls of
one name in one boot summed), each secondary CPU's bring-up, the silence after each line that opens
one of the boot's largest gaps (the line's text with its numbers masked, so that the same line of
another boot, or of another kernel version with other offsets, has the same name), each systemd
unit's activation, and each mark of the boot loader's bootstage report (its time since the mark
before; marks of one name summed), which only the metrics they make up are decomposed into. Only
what the log states is a component; nothing is guessed.

Gaps need care: a line that opens one of the largest gaps in one boot may open a smaller one in
another, which a top-N list would call "absent". So every line's silence is measured
(:func:`line_gaps`) and the caller keeps the names that are among some boot's largest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bootscope.metrics import BOOTLOADER_HANDOFF_S, POWERON_TO_KERNEL_S, REGISTRY, Clock
from bootscope.model import Breakdown, LogLine, UnitSpan
from bootscope.parse.early_counter import restart_at, starts_early

PHASE, INITCALL, CPU, GAP, UNIT = "phase", "initcall", "cpu", "gap", "unit"
BOOTLOADER = "bootloader"  # the marks of U-Boot's bootstage report, each its time since the last
KINDS = (PHASE, INITCALL, CPU, GAP, UNIT, BOOTLOADER)
# Metrics the boot loader's stages make up (on its timer, or the host's from power-on); no other
# kind is part of them. A metric on the kernel's clock has no boot loader stage in it.
BOOTLOADER_METRICS = (BOOTLOADER_HANDOFF_S, POWERON_TO_KERNEL_S)
KERNEL_CLOCKS = (Clock.GUEST_PRINTK, Clock.GUEST_UPTIME, Clock.EARLY_COUNTER)
# Phases after the kernel hands over to /init: not part of kernel_init_s.
USERSPACE_PHASES = frozenset({"userspace"})
_NUMBER = re.compile(r"0x[0-9a-fA-F]+|\d+")

Components = dict[tuple[str, str], float]


def gap_name(line: str) -> str:
    """Return the name of the gap that ``line`` opens: its text with every number (decimal or hex)
    masked as ``#`` and runs of blanks squeezed, so that offsets, addresses and counts do not split
    one line into many components."""
    return " ".join(_NUMBER.sub("#", line).split())


def line_gaps(lines: Sequence[LogLine]) -> dict[str, float]:
    """Return ``{gap name: seconds}``: the silence after every timed line, named by
    :func:`gap_name` (lines of the same name summed). As in the breakdown's largest gaps, a silence
    runs from the latest time seen to the next line that passes it, so a line whose stamp steps back
    neither hides nor invents one, and early cycle-counter lines are at zero. Raises nothing."""
    found: dict[str, float] = {}
    high: float | None = None
    opener = ""
    timed = [line for line in lines if line.guest_s is not None]
    # early cycle-counter lines are at zero on the kernel's clock (bootscope.parse.early_counter)
    early = None
    if timed and starts_early(timed[0].text, timed[0].guest_s or 0.0):
        early = restart_at([line.guest_s or 0.0 for line in timed], timed[0].text)
    for k, line in enumerate(timed):
        t = 0.0 if early is not None and k < early else float(line.guest_s or 0.0)
        if high is None or t > high:
            if high is not None:
                name = gap_name(opener)
                found[name] = found.get(name, 0.0) + (t - high)
            high, opener = t, line.text
    return found


def boot_components(
    breakdown: Breakdown,
    units: Sequence[UnitSpan] = (),
    *,
    kinds: Sequence[str] = KINDS,
    kernel_only: bool = False,
    lines: Sequence[LogLine] = (),
) -> Components:
    """Return ``{(kind, name): seconds}`` for one boot, for the ``kinds`` asked. ``kernel_only``
    leaves out the phases after ``Run /init`` and systemd's units (to decompose ``kernel_init_s``).
    Gaps come from ``lines`` (every line's silence, :func:`line_gaps`) when given, else from the
    breakdown's largest gaps only. An initcall that never returned, a CPU whose bring-up the log
    does not time and a unit that never became active are left out. Raises nothing."""
    found: Components = {}
    if PHASE in kinds:
        for phase in breakdown.phases:
            if phase.duration_s is None or (kernel_only and phase.name in USERSPACE_PHASES):
                continue
            found[(PHASE, phase.name)] = phase.duration_s
    if INITCALL in kinds:
        for call in breakdown.initcalls.all:
            if call.duration_us is not None:
                key = (INITCALL, call.name)
                found[key] = found.get(key, 0.0) + call.duration_us / 1e6
    if CPU in kinds:
        for cpu in breakdown.cpu_bringup.cpus:
            if cpu.duration_s is not None:
                found[(CPU, f"cpu{cpu.cpu}")] = cpu.duration_s
    if GAP in kinds and lines:
        found.update({(GAP, name): seconds for name, seconds in line_gaps(lines).items()})
    elif GAP in kinds:
        for gap in breakdown.gaps:
            key = (GAP, gap_name(gap.before))
            found[key] = found.get(key, 0.0) + gap.duration_s
    if UNIT in kinds and not kernel_only:
        for unit in units:
            if unit.activation_s is not None:
                found[(UNIT, unit.unit)] = unit.activation_s
    if BOOTLOADER in kinds and not kernel_only and breakdown.bootstage is not None:
        for number, stage in enumerate(breakdown.bootstage.stages, start=1):
            if stage.elapsed_s is not None and number > 1:  # the first mark is reset itself
                key = (BOOTLOADER, stage.name or f"(mark {number}, no name)")
                found[key] = found.get(key, 0.0) + stage.elapsed_s
    return found


def kinds_for(metric: str, kinds: Sequence[str]) -> tuple[str, ...]:
    """Return the kinds among ``kinds`` that can make up ``metric``: only the boot loader's stages
    for a metric they make up, none of them for a metric on the kernel's clock."""
    if metric in BOOTLOADER_METRICS:
        return tuple(kind for kind in kinds if kind == BOOTLOADER)
    entry = REGISTRY.get(metric)
    if entry is not None and entry.clock in KERNEL_CLOCKS:
        return tuple(kind for kind in kinds if kind != BOOTLOADER)
    return tuple(kinds)


def additive_kind(metric: str) -> str:
    """The kind whose components add up to ``metric``: the boot loader's stages for the metrics
    they make up, else the phases."""
    return BOOTLOADER if metric in BOOTLOADER_METRICS else PHASE


def top_gap_names(breakdown: Breakdown) -> frozenset[str]:
    """Return the names of the lines that open the breakdown's largest gaps (see :func:`gap_name`)."""
    return frozenset(gap_name(gap.before) for gap in breakdown.gaps)

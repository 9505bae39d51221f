"""CPU bring-up: per-CPU times from the x86 ``#N`` progress lines and from per-CPU cycle lines."""

from __future__ import annotations

import re

from bootscope.model import CpuBringup, CpuBringupSummary

_CPU_NUMBER = re.compile(r"#(\d+)")


class CpuSeen:
    """Collects one boot's bring-up lines; ``tsc_mhz`` converts cycle counts to seconds when logged."""

    def __init__(self) -> None:
        self.tsc_mhz: float | None = None
        # (guest time of the progress line, the CPUs that line announces)
        self.progress_lines: list[tuple[float | None, tuple[int, ...]]] = []
        self.cycles_by_cpu: dict[int, tuple[float | None, tuple[int, ...], int]] = {}

    def progress(self, text: str, t: float | None) -> None:
        """Note a progress line (".... node  #0, CPUs:      #1" or " #2") at guest time ``t`` (s)."""
        after = text.split("CPUs:", 1)[-1]
        cpus = tuple(int(number) for number in _CPU_NUMBER.findall(after))
        if cpus:
            self.progress_lines.append((t, cpus))

    def cycles(self, groups: tuple[str | None, ...], t: float | None) -> None:
        """Note a ``CPU#N up in a, b, c, d ( total)`` line (cycle counts; David Woodhouse's timing patch,
        LKML "Re: [PATCH] use x86 cpu park to speedup smp_init in kexec situation", 2021-01-19)."""
        cpu = int(groups[0] or 0)
        phases = tuple(int(value or 0) for value in groups[1:5])
        self.cycles_by_cpu[cpu] = (t, phases, int(groups[5] or 0))


def summarize_cpus(seen: CpuSeen, smp_start_s: float | None, smp_done_s: float | None) -> CpuBringupSummary:
    """Return per-CPU start and duration (s), the serial total (s) and the parallel estimate (s).

    A CPU announced alone on its progress line lasts until the next progress line (or ``smp: Brought
    up``); CPUs that share one line (pr_cont joined them) get no duration: it is not in the log.
    The serial total is the span from ``smp: Bringing up`` to ``smp: Brought up``; the parallel
    estimate is the slowest single CPU, what bring-up would cost if all CPUs came up at once.
    """
    found: dict[int, CpuBringup] = {}
    lines = seen.progress_lines
    for position, (t, announced) in enumerate(lines):
        next_t = lines[position + 1][0] if position + 1 < len(lines) else smp_done_s
        duration: float | None = None
        if len(announced) == 1 and t is not None and next_t is not None and next_t >= t:
            duration = next_t - t
        for cpu in announced:
            found[cpu] = CpuBringup(cpu, t, duration)
    for cpu, (t, phases, total) in seen.cycles_by_cpu.items():
        cycle_s = total / (seen.tsc_mhz * 1e6) if seen.tsc_mhz else None
        earlier = found.get(cpu)
        start = (
            earlier.start_s if earlier else (t - cycle_s if t is not None and cycle_s is not None else None)
        )
        duration = earlier.duration_s if earlier and earlier.duration_s is not None else cycle_s
        found[cpu] = CpuBringup(cpu, start, duration, phases, total)
    cpus = tuple(found[cpu] for cpu in sorted(found))
    durations = [cpu.duration_s for cpu in cpus if cpu.duration_s is not None]
    if smp_start_s is not None and smp_done_s is not None:
        serial: float | None = smp_done_s - smp_start_s
    else:
        serial = sum(durations) if durations else None
    return CpuBringupSummary(cpus, serial, max(durations) if durations else None)


# x86's serial bring-up announces a CPU ("#N") only once the one before it is up, which takes a
# millisecond or more even on hardware (12 ms a CPU on the 128-CPU server of the LPC 2023 talk
# "Improving kexec boot time"); parallel bring-up (6.5+, kernel/cpu.c cpuhp_bringup_cpus_parallel)
# kicks every CPU first, announcing each within a fraction of a millisecond.
PARALLEL_KICK_S = 0.0003


def announced_in_parallel(summary: CpuBringupSummary) -> bool | None:
    """Return whether the progress lines show CPUs kicked without waiting for each other (True: parallel
    bring-up), one after the other (False), or None where fewer than two CPUs' announcements can be
    timed. A line's CPUs count as announced between its stamp and the next line's; the last line is
    left out (its span holds the wait for every CPU to come up)."""
    counts: dict[float, int] = {}
    for cpu in summary.cpus:
        if cpu.start_s is not None:
            counts[cpu.start_s] = counts.get(cpu.start_s, 0) + 1
    starts = sorted(counts)
    spans = [(starts[i + 1] - starts[i], counts[starts[i]]) for i in range(len(starts) - 1)]
    timed = sum(count for _, count in spans)
    if timed < 2:
        return None
    if sum(span for span, _ in spans) / timed < PARALLEL_KICK_S:
        return True
    return any(count >= 4 and span / count < PARALLEL_KICK_S for span, count in spans)

"""Presentation-ready views of one boot, shared by the HTML report, the trace and the plots.

Nothing here analyses a boot: it rearranges what ``analyze`` computed (a ``Breakdown``) and the boot's
own lines into the shapes the pictures draw (lanes, per-line bars, side-by-side rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bootscope.model import Breakdown, Initcall, LogLine, UnitSpan


@dataclass(frozen=True, slots=True)
class LineGap:
    """The time from one timed line to the next: the bar of seed 004's chart."""

    index: int
    start_s: float
    duration_s: float
    text: str


@dataclass(frozen=True, slots=True)
class DeltaRow:
    """One phase or initcall in two boots; a value is None when that boot does not have it."""

    kind: str
    name: str
    a_s: float | None
    b_s: float | None

    @property
    def delta_s(self) -> float | None:
        """Return b minus a in seconds (positive: grew), None if either side is missing."""
        if self.a_s is None or self.b_s is None:
            return None
        return self.b_s - self.a_s


def initcall_lane(call: Initcall) -> str:
    """Return the lane name an initcall is drawn on: the pid the log gives (``@ pid``)."""
    if call.pid is None:
        return "initcalls"
    if call.pid <= 1:
        return f"initcalls @ pid {call.pid}"
    # Anything but the boot thread (pid 1) or the boot CPU's idle task (pid 0) is asynchronous.
    return f"async @ pid {call.pid}"


def drawable_initcalls(breakdown: Breakdown) -> tuple[Initcall, ...]:
    """Return the initcalls that have both a start time and a duration (the ones drawn as bars)."""
    calls = breakdown.initcalls.all or breakdown.initcalls.top
    return tuple(c for c in calls if c.start_s is not None and c.duration_us is not None)


def line_gaps(lines: Sequence[LogLine]) -> list[LineGap]:
    """Return, for each timed line, the seconds until the next line with a later or equal time.

    Measured from the latest time seen so far (as ``analyze`` measures its gaps): a line that steps
    back in time (a secondary CPU's unsynchronised clock, a reset) gets no bar and hides no silence.
    The last timed line gets no bar.
    """
    gaps: list[LineGap] = []
    high_s = float("-inf")
    high_index = -1
    for index, line in enumerate(lines):
        t = line.guest_s
        if t is None or t < high_s:
            continue
        if high_index >= 0:
            gaps.append(LineGap(high_index, high_s, t - high_s, lines[high_index].text))
        high_s, high_index = t, index
    return gaps


def format_duration(seconds: float) -> str:
    """Return a short human duration: ``1.7 s`` from one second on, ``923 ms`` or ``45 us`` below."""
    if seconds >= 1.0:
        return f"{seconds:.1f} s" if seconds < 100 else f"{seconds:.0f} s"
    if seconds >= 0.001:
        return f"{seconds * 1e3:.0f} ms"
    return f"{seconds * 1e6:.0f} us"


def total_s(breakdown: Breakdown, lines: Sequence[LogLine]) -> float | None:
    """Return the boot's span in seconds (first to last timed line), None when nothing is timed."""
    if breakdown.first_s is not None and breakdown.last_s is not None:
        return breakdown.last_s - breakdown.first_s
    times = [line.guest_s for line in lines if line.guest_s is not None]
    return max(times) - min(times) if times else None


def gap_sentence(breakdown: Breakdown, lines: Sequence[LogLine]) -> str:
    """Return seed 004's sentence: ``Total: 4.3 s. Biggest: <line> 1.7 s, 40 %`` ('' if untimed).

    The biggest gap is the breakdown's largest; the share is of the first-to-last-line total.
    """
    total = total_s(breakdown, lines)
    if total is None:
        return ""
    if breakdown.gaps:
        top = max(breakdown.gaps, key=lambda g: g.duration_s)
        before, duration_s = top.before, top.duration_s
    else:
        gaps = line_gaps(lines)
        if not gaps:
            return f"Total: {format_duration(total)}."
        biggest = max(gaps, key=lambda g: g.duration_s)
        before, duration_s = biggest.text, biggest.duration_s
    share = 100.0 * duration_s / total if total > 0 else 0.0
    return (
        f"Total: {format_duration(total)}. "
        f"Biggest: {before.strip()} {format_duration(duration_s)}, {share:.0f} %"
    )


def delta_rows(a: Breakdown, b: Breakdown, limit: int = 25) -> list[DeltaRow]:
    """Return phases (all, in a's order) then the ``limit`` initcalls whose duration changed most.

    Durations are in seconds; an initcall present in one boot only counts with its whole duration.
    """
    rows: list[DeltaRow] = []
    b_phases = {p.name: p.duration_s for p in b.phases}
    seen: set[str] = set()
    for phase in a.phases:
        rows.append(DeltaRow("phase", phase.name, phase.duration_s, b_phases.get(phase.name)))
        seen.add(phase.name)
    rows.extend(DeltaRow("phase", p.name, None, p.duration_s) for p in b.phases if p.name not in seen)

    def durations(bd: Breakdown) -> dict[str, float]:
        out: dict[str, float] = {}
        for call in bd.initcalls.all or bd.initcalls.top:
            if call.duration_us is not None:
                out[call.name] = out.get(call.name, 0.0) + call.duration_us / 1e6
        return out

    a_calls, b_calls = durations(a), durations(b)
    calls = [DeltaRow("initcall", n, a_calls.get(n), b_calls.get(n)) for n in a_calls.keys() | b_calls]
    calls.sort(key=lambda r: (-abs((r.b_s or 0.0) - (r.a_s or 0.0)), r.name))
    rows.extend(calls[:limit])
    return rows


def drawable_units(units: Sequence[UnitSpan]) -> tuple[UnitSpan, ...]:
    """Return the units that have a start on systemd's clock (activating, else active), in start
    order: what the unit lanes and the trace draw. A unit with no active time is drawn as a point."""
    started = [u for u in units if u.start_s is not None]
    return tuple(sorted(started, key=lambda u: u.start_s or 0.0))

"""One boot as Chrome trace event JSON, which Perfetto UI and chrome://tracing open.

Format: the "Trace Event Format" document (object form ``{"traceEvents": [...]}``); timestamps and
durations are in microseconds. Complete events (``"ph": "X"``) on one thread lane must nest, so events
that would overlap partially go to an extra lane named after the first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bootscope.model import Breakdown, LogLine, UnitSpan
from bootscope.report.views import drawable_initcalls, drawable_units, initcall_lane

Event = dict[str, Any]

# Processes (pids) in the trace; each is a group of lanes in Perfetto.
PID_BOOT = 1  # phases, milestones, largest gaps
PID_INITCALLS = 2  # one lane per kernel pid that ran initcalls
PID_CPUS = 3  # one lane per secondary CPU
PID_CONSOLE = 4  # every log line as an instant event
PID_UNITS = 5  # systemd's units, activating -> active (a full userspace boot)

_TID_PHASES = 1
_TID_GAPS = 2


def _us(seconds: float) -> float:
    # Three decimals: nanoseconds, the finest unit a kernel timestamp can carry.
    return round(seconds * 1e6, 3)


class _Lanes:
    """Assigns complete events to lanes so that events on one lane are disjoint or nested."""

    def __init__(self) -> None:
        # lane key -> stack of end times of the open (enclosing) events, for events added in start order
        self._stacks: dict[tuple[int, int], list[float]] = {}

    def place(self, pid: int, tids: Sequence[int], start_us: float, dur_us: float) -> int:
        end_us = start_us + dur_us
        for tid in tids:
            stack = self._stacks.setdefault((pid, tid), [])
            while stack and stack[-1] <= start_us:
                stack.pop()
            if not stack or end_us <= stack[-1]:
                stack.append(end_us)
                return tid
        raise AssertionError("no lane given")  # pragma: no cover - callers pass an open-ended range


def _milestone_events(breakdown: Breakdown) -> list[Event]:
    """Return one instant event per milestone, in time order, on the phases track."""
    return [
        {
            "name": name,
            "cat": "milestone",
            "ph": "i",
            "s": "g",
            "ts": _us(t_s),
            "pid": PID_BOOT,
            "tid": _TID_PHASES,
        }
        for name, t_s in sorted(breakdown.milestones.items(), key=lambda kv: kv[1])
    ]


def _line_events(lines: Sequence[LogLine]) -> list[Event]:
    """Return one instant event per log line on the console track; an untimed line at the time of
    the last timed line before it (0 at the start), marked ``untimed``."""
    events: list[Event] = []
    last_ts = 0.0
    for number, line in enumerate(lines, start=1):
        line_args: dict[str, Any] = {"text": line.text, "line": number}
        if line.guest_s is not None:
            last_ts = _us(line.guest_s)
        else:
            line_args["untimed"] = True
        if line.level is not None:
            line_args["level"] = line.level
        if line.caller is not None:
            line_args["caller"] = line.caller
        name = line.text.strip()[:80] or "(empty line)"
        event = {"name": name, "cat": "log", "ph": "i", "s": "t", "ts": last_ts, "pid": PID_CONSOLE, "tid": 1}
        events.append({**event, "args": line_args})
    return events


def trace_events(
    breakdown: Breakdown, lines: Sequence[LogLine], label: str = "boot", units: Sequence[UnitSpan] = ()
) -> list[Event]:
    """Return the trace events of one boot: metadata, phases, initcalls, CPU bring-up, gaps, systemd
    units (activating -> active slices on the "systemd units" track), lines.

    Times are guest printk seconds converted to microseconds (systemd's monotonic clock is the same
    clock). Untimed lines are placed at the time of
    the last timed line before them (0 at the start) with ``args.untimed = true``. Never raises on a
    well-formed Breakdown.
    """
    meta: list[Event] = []
    spans: list[tuple[float, float, str, str, int, list[int], dict[str, Any]]] = []

    def name_process(pid: int, name: str, sort: int) -> None:
        meta.append(
            {"name": "process_name", "ph": "M", "ts": 0, "pid": pid, "tid": 0, "args": {"name": name}}
        )
        meta.append(
            {
                "name": "process_sort_index",
                "ph": "M",
                "ts": 0,
                "pid": pid,
                "tid": 0,
                "args": {"sort_index": sort},
            }
        )

    thread_names: dict[tuple[int, int], str] = {}

    name_process(PID_BOOT, f"{label}: phases", 1)
    name_process(PID_INITCALLS, f"{label}: initcalls", 2)
    name_process(PID_CPUS, f"{label}: CPU bring-up", 3)
    name_process(PID_CONSOLE, f"{label}: console", 4)
    drawn_units = drawable_units(units)
    if drawn_units:
        name_process(PID_UNITS, f"{label}: systemd units", 5)
        thread_names[(PID_UNITS, 1)] = "systemd units"
    thread_names[(PID_BOOT, _TID_PHASES)] = "phases"
    thread_names[(PID_BOOT, _TID_GAPS)] = "largest gaps"
    thread_names[(PID_CONSOLE, 1)] = "log lines"

    # Lanes for overflow start far above any real kernel pid or CPU number.
    overflow = [100_000 + i for i in range(1000)]
    for phase in breakdown.phases:
        if phase.start_s is None or phase.end_s is None or phase.end_s < phase.start_s:
            continue
        args: dict[str, Any] = {"share": phase.share} if phase.share is not None else {}
        spans.append(
            (phase.start_s, phase.end_s - phase.start_s, phase.name, "phase", PID_BOOT, [_TID_PHASES], args)
        )
    for gap in breakdown.gaps:
        args = {"before": gap.before, "after": gap.after}
        spans.append((gap.start_s, gap.duration_s, "silence", "gap", PID_BOOT, [_TID_GAPS], args))
    for call in drawable_initcalls(breakdown):
        assert call.start_s is not None and call.duration_us is not None
        tid = call.pid if call.pid is not None else 1
        thread_names.setdefault((PID_INITCALLS, tid), initcall_lane(call))
        args = {"ret": call.ret, "duration_us": call.duration_us}
        if call.module:
            args["module"] = call.module
        spans.append(
            (call.start_s, call.duration_us / 1e6, call.name, "initcall", PID_INITCALLS, [tid], args)
        )
    for cpu in breakdown.cpu_bringup.cpus:
        if cpu.start_s is None or cpu.duration_s is None:
            continue
        thread_names.setdefault((PID_CPUS, cpu.cpu), f"CPU {cpu.cpu}")
        args = {"total_cycles": cpu.total_cycles} if cpu.total_cycles is not None else {}
        spans.append((cpu.start_s, cpu.duration_s, f"CPU {cpu.cpu} up", "cpu", PID_CPUS, [cpu.cpu], args))

    for unit in drawn_units:
        assert unit.start_s is not None
        args = {"activating_s": unit.activating_s, "active_s": unit.active_s, "ready_s": unit.ready_s}
        spans.append((unit.start_s, unit.activation_s or 0.0, unit.unit, "unit", PID_UNITS, [1], args))

    # Longer first among equal starts, so an enclosing event is placed before what it encloses.
    spans.sort(key=lambda s: (_us(s[0]), -_us(s[1])))
    lanes = _Lanes()
    events: list[Event] = []
    for start_s, dur_s, name, cat, pid, tids, args in spans:
        ts, dur = _us(start_s), max(_us(dur_s), 0.0)
        tid = lanes.place(pid, tids + overflow, ts, dur)
        if tid not in tids:
            base = thread_names.get((pid, tids[0]), str(tids[0]))
            thread_names.setdefault((pid, tid), f"{base} (overlapping)")
        events.append(
            {"name": name, "cat": cat, "ph": "X", "ts": ts, "dur": dur, "pid": pid, "tid": tid, "args": args}
        )

    events += _milestone_events(breakdown)
    events += _line_events(lines)

    for (pid, tid), thread in sorted(thread_names.items()):
        meta.append(
            {"name": "thread_name", "ph": "M", "ts": 0, "pid": pid, "tid": tid, "args": {"name": thread}}
        )
    return meta + events


def render_trace(
    breakdown: Breakdown, lines: Sequence[LogLine], label: str = "boot", units: Sequence[UnitSpan] = ()
) -> str:
    """Return the trace as JSON text: ``{"traceEvents": [...], "displayTimeUnit": "ms"}``.

    Non-ASCII and control characters are escaped, so the file is plain ASCII whatever the log held.
    """
    doc = {"traceEvents": trace_events(breakdown, lines, label, units), "displayTimeUnit": "ms"}
    return json.dumps(doc, ensure_ascii=True, separators=(",", ":"))

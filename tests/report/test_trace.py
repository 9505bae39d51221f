"""The Chrome trace: every event valid per the Trace Event Format, slices on one lane nested."""

from __future__ import annotations

import json
from collections import defaultdict

from report_fixtures import hand_view

from bootscope.model import Initcall, InitcallSummary
from bootscope.report.trace import render_trace, trace_events
from bootscope.report.views import drawable_initcalls
from bootscope.usecases.view_types import BootView

REQUIRED = ("name", "ph", "ts", "pid", "tid")


def _check_valid(events: list[dict[str, object]]) -> None:
    for event in events:
        for key in REQUIRED:
            assert key in event, (key, event)
        assert isinstance(event["name"], str)
        assert isinstance(event["ts"], int | float)
        assert isinstance(event["pid"], int) and isinstance(event["tid"], int)
        assert event["ph"] in ("X", "i", "M"), event
        if event["ph"] == "X":
            assert isinstance(event["dur"], int | float) and event["dur"] >= 0, event
        if event["ph"] == "i":
            assert event["s"] in ("g", "p", "t")
        if event["ph"] == "M":
            assert event["name"] in ("process_name", "thread_name", "process_sort_index")


def _check_nesting(events: list[dict[str, object]]) -> None:
    lanes: dict[tuple[object, object], list[tuple[float, float]]] = defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            lanes[(e["pid"], e["tid"])].append((float(e["ts"]), float(e["ts"]) + float(e["dur"])))  # type: ignore[arg-type]
    for spans in lanes.values():
        spans.sort(key=lambda s: (s[0], -s[1]))
        for i, (s1, e1) in enumerate(spans):
            for s2, e2 in spans[i + 1 :]:
                if s2 >= e1:
                    break
                # s1 <= s2 < e1: the later one must end inside the earlier one
                assert e2 <= e1, f"partial overlap {(s1, e1)} {(s2, e2)}"


def test_real_boot_trace_is_valid_and_complete(smp4_view: BootView) -> None:
    doc = json.loads(render_trace(smp4_view.breakdown, smp4_view.lines, "smp4"))
    assert doc["displayTimeUnit"] == "ms"
    events = doc["traceEvents"]
    _check_valid(events)
    _check_nesting(events)
    calls = [e for e in events if e.get("cat") == "initcall"]
    expected = drawable_initcalls(smp4_view.breakdown)
    assert len(calls) == len(expected) > 500
    # durations in microseconds straight from the log, start times from seconds
    by_name = {c.name: c for c in expected}
    slow = max(expected, key=lambda c: c.duration_us or 0)
    event = next(e for e in calls if e["name"] == slow.name)
    assert event["dur"] == by_name[slow.name].duration_us
    assert event["ts"] == round(slow.start_s * 1e6, 3)  # type: ignore[operator]
    logs = [e for e in events if e.get("cat") == "log"]
    assert [e["args"]["text"] for e in logs] == [line.text for line in smp4_view.lines]
    cpus = [e for e in events if e.get("cat") == "cpu"]
    assert sorted(e["tid"] for e in cpus) == [1, 2, 3]
    milestones = [e for e in events if e.get("cat") == "milestone"]
    assert {e["name"] for e in milestones} == set(smp4_view.breakdown.milestones)
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert names[(3, 2)] == "CPU 2"


def test_partial_overlap_moves_to_another_lane() -> None:
    view = hand_view()
    calls = (
        Initcall("a", 1.0, 500_000, 0, pid=1),
        Initcall("b", 1.2, 500_000, 0, pid=1),  # overlaps a partially
        Initcall("c", 1.1, 100_000, 0, pid=1),  # nested in a
    )
    bd = view.breakdown
    summary = InitcallSummary(3, 1.1, (), (), calls, calls)
    changed = type(bd)(**{**{f: getattr(bd, f) for f in bd.__slots__}, "initcalls": summary})  # type: ignore[attr-defined]
    events = trace_events(changed, view.lines)
    _check_nesting(events)
    tids = {e["name"]: e["tid"] for e in events if e.get("cat") == "initcall"}
    assert tids["a"] == tids["c"] == 1
    assert tids["b"] != 1
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert names[(2, tids["b"])] == "initcalls @ pid 1 (overlapping)"


def test_untimed_and_hostile_lines_are_kept_as_text() -> None:
    view = hand_view()
    text = render_trace(view.breakdown, view.lines)
    assert text.isascii()
    events = json.loads(text)["traceEvents"]
    logs = [e for e in events if e.get("cat") == "log"]
    assert logs[0]["args"]["untimed"] is True and logs[0]["ts"] == 0
    assert logs[-1]["args"]["untimed"] is True and logs[-1]["ts"] == 2.6e6
    assert any("<script>alert(1)</script>" in e["args"]["text"] for e in logs)

"""systemd's units in the pictures: unit lanes on the HTML timeline and a "systemd units" track in the
trace, from a real full userspace boot (tests/data/debian-12-image-systemd-tcg.tsv)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from captures import load_chain_capture

from bootscope import defaults
from bootscope.analyze.captured import analyze_captured
from bootscope.report.html import render_boot_report
from bootscope.report.trace import PID_UNITS, render_trace
from bootscope.usecases.view_types import BootView


@pytest.fixture(scope="module")
def image_view(data_dir: Path) -> BootView:
    boot = load_chain_capture(data_dir / "debian-12-image-systemd-tcg.tsv")
    analysis = analyze_captured(
        boot.lines, host_start_ns=boot.host_start_ns, marker_regex=defaults.LOGIN_PROMPT
    )
    return BootView("image boot", analysis.breakdown, analysis.lines, analysis.units)


def test_the_analysis_keeps_every_started_unit(image_view: BootView) -> None:
    units = {u.unit: u for u in image_view.units}
    assert len(units) == 76
    # Id=systemd-sysctl.service InactiveExit=18515996 ActiveEnter=20604948 (us, in the capture)
    sysctl = units["systemd-sysctl.service"]
    assert sysctl.activating_s == pytest.approx(18.515996) and sysctl.active_s == pytest.approx(20.604948)
    assert sysctl.activation_s == pytest.approx(2.088952)


def test_html_timeline_has_one_lane_per_unit_on_the_kernel_clock(image_view: BootView) -> None:
    page = render_boot_report(image_view)
    block = re.search(r'<script type="application/json" id="bootscope-data">(.*?)</script>', page, re.S)
    assert block is not None
    boot = json.loads(block.group(1))["boot"]
    rows = {row[0]: row for row in boot["units"]}
    assert len(boot["units"]) == boot["units_all"] == 76 == len(rows)
    assert rows["systemd-sysctl.service"][1:] == [pytest.approx(18.515996), pytest.approx(20.604948)]
    starts = [row[1] for row in boot["units"]]
    assert starts == sorted(starts)
    # on the kernel's axis: every unit starts after the real root's systemd logged its start line
    # (9.24 s) and is active by its "Startup finished" line (33.43 s), both printk-stamped
    metrics = image_view.breakdown.metrics
    assert metrics.kernel_init_s is not None and metrics.initrd_s is not None
    assert metrics.systemd_userspace_s is not None
    systemd_start_s = metrics.kernel_init_s + metrics.initrd_s
    assert systemd_start_s < min(starts)
    actives = [row[2] for row in boot["units"] if row[2] is not None]
    assert max(actives) <= systemd_start_s + metrics.systemd_userspace_s


def test_trace_has_the_units_as_slices_on_a_systemd_units_track(image_view: BootView) -> None:
    events = json.loads(render_trace(image_view.breakdown, image_view.lines, "b", image_view.units))[
        "traceEvents"
    ]
    slices = [e for e in events if e.get("cat") == "unit"]
    assert len(slices) == 76 and all(e["ph"] == "X" and e["pid"] == PID_UNITS for e in slices)
    names = {e["args"].get("name") for e in events if e["ph"] == "M" and e["pid"] == PID_UNITS}
    assert "systemd units" in names and "b: systemd units" in names
    sysctl = next(e for e in slices if e["name"] == "systemd-sysctl.service")
    assert sysctl["ts"] == pytest.approx(18515996) and sysctl["dur"] == pytest.approx(2088952)
    # slices on one lane nest or are disjoint (Perfetto's rule), so overlapping units took extra lanes
    by_tid: dict[int, list[tuple[float, float]]] = {}
    for e in sorted(slices, key=lambda e: (e["ts"], -e["dur"])):
        by_tid.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
    for spans in by_tid.values():
        stack: list[float] = []
        for start, end in spans:
            while stack and stack[-1] <= start:
                stack.pop()
            assert not stack or end <= stack[-1]
            stack.append(end)


def test_a_kernel_only_boot_has_no_unit_track(smp4_view: BootView) -> None:
    events = json.loads(render_trace(smp4_view.breakdown, smp4_view.lines))["traceEvents"]
    assert not [e for e in events if e["pid"] == PID_UNITS]

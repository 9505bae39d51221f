"""The HTML report in a real browser: charts drawn, tooltips, no errors, no script from the log."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
from report_fixtures import make_stored_run, real_views

from bootscope.metrics import DEFINITIONS
from bootscope.report.html import render_boot_report
from bootscope.report.views import drawable_initcalls
from bootscope.usecases.views import boots_from_logs

pytestmark = pytest.mark.browser

DATA = Path(__file__).resolve().parents[1] / "data"
HOSTILE = (
    "evil <script>alert(1)</script> </script> \"quoted\" 'single' & <img src=x onerror=alert(2)> \x07bell"
)

# Points of the initcall trace (the second bar trace) that Plotly drew on the timeline.
BARS_JS = "document.querySelectorAll('#timeline .barlayer .trace')[1].querySelectorAll('.point path').length"


def _bar_center(page: Any, index: int) -> tuple[float, float]:
    box = page.evaluate(
        """(i) => { const p = document.querySelectorAll('#timeline .barlayer .trace')[1]
                      .querySelectorAll('.point path')[i].getBoundingClientRect();
                    return [p.x + p.width / 2, p.y + p.height / 2]; }""",
        index,
    )
    return float(box[0]), float(box[1])


def test_timeline_bars_tooltip_and_screenshot(tmp_path: Path, open_page: Any, artifacts: Path) -> None:
    view = boots_from_logs([DATA / "debian-6.1-cloud-initcall-smp4.log"])[0]
    path = tmp_path / "report.html"
    path.write_text(render_boot_report(view, definitions=DEFINITIONS), encoding="utf-8")
    opened = open_page(path)
    page = opened.page
    calls = drawable_initcalls(view.breakdown)
    assert page.evaluate(BARS_JS) == len(calls) == 575
    # hover the longest initcall's bar: the tooltip shows its log line, start and duration
    longest = max(range(len(calls)), key=lambda i: calls[i].duration_us or 0)
    page.locator("#timeline").scroll_into_view_if_needed()
    x, y = _bar_center(page, longest)
    page.mouse.move(x, y)
    page.wait_for_selector("#timeline .hoverlayer .hovertext", timeout=10_000)
    tip = page.locator("#timeline .hoverlayer .hovertext").text_content() or ""
    call = calls[longest]
    assert call.name in tip
    assert f"returned 0 after {call.duration_us} usecs" in tip
    assert f"start {call.start_s:.6f} s" in tip
    page.screenshot(path=str(artifacts / "report-timeline.png"))
    page.screenshot(path=str(artifacts / "report-full.png"), full_page=True)
    # a log line's time link moves the timeline there
    page.fill("#log-search", "crypto_algapi_init")
    assert page.locator("#log .log-row").count() == 2
    page.locator("#log .log-row a").first.click()
    x_range = page.evaluate("document.getElementById('timeline').layout.xaxis.range")
    assert x_range[0] < 3.341218 < x_range[1]
    assert opened.errors == [] and opened.requests == [] and opened.dialogs == []


def test_hostile_log_renders_as_text(tmp_path: Path, open_page: Any, artifacts: Path) -> None:
    log = (DATA / "debian-6.1-cloud-smp2.log").read_text(encoding="utf-8", errors="replace").splitlines()
    log.insert(40, "[    0.500000] " + HOSTILE)
    src = tmp_path / "hostile.log"
    src.write_text("\n".join(log) + "\n", encoding="utf-8")
    view = boots_from_logs([src])[0]
    path = tmp_path / "hostile.html"
    path.write_text(render_boot_report(view, vs=view, definitions=DEFINITIONS), encoding="utf-8")
    opened = open_page(path)
    page = opened.page
    page.fill("#log-search", "evil <script>")
    row = page.locator("#log .log-row").first
    assert (
        "<script>alert(1)</script> </script> \"quoted\" 'single' & <img src=x onerror=alert(2)>"
        in row.inner_text()
    )
    assert "\u2407bell" in row.inner_text()  # the control character shown as its picture
    assert page.locator("#log img, #log script").count() == 0
    assert page.evaluate("document.querySelectorAll('script').length") == 3
    page.screenshot(path=str(artifacts / "report-hostile.png"))
    assert opened.dialogs == []
    assert opened.errors == [] and opened.requests == []


def test_run_report_draws_every_metric(tmp_path: Path, open_page: Any, artifacts: Path) -> None:
    from bootscope.report.html import render_run_report
    from bootscope.store.db import Store
    from bootscope.usecases.views import run_view

    smp1 = real_views(DATA / "debian-6.1-cloud-initcall-smp1.log")[0]
    smp4 = real_views(DATA / "debian-6.1-cloud-initcall-smp4.log")[0]
    stored_run = make_stored_run(tmp_path, smp1, smp4)
    with Store.open(stored_run) as store:
        run = run_view(store, "latest", 0.05)
    path = tmp_path / "run.html"
    path.write_text(render_run_report(run, definitions=DEFINITIONS), encoding="utf-8")
    opened = open_page(path)
    page = opened.page
    # a strip plot and an ECDF per metric; 6 dots per variant in each strip plot
    assert page.locator("#dists .chart").count() == 2 * len(run.metrics) == 4
    dots = page.evaluate(
        "document.querySelectorAll('#dist-0 .scatterlayer .trace')[0].querySelectorAll('.point').length"
    )
    assert dots == 6
    assert "no marker after 120 s <b>" in page.locator("body").inner_text()
    page.screenshot(path=str(artifacts / "report-run.png"), full_page=True)
    assert opened.errors == [] and opened.requests == [] and opened.dialogs == []


def test_unit_lanes_of_a_full_userspace_boot(tmp_path: Path, open_page: Any, artifacts: Path) -> None:
    from captures import load_chain_capture

    from bootscope import defaults
    from bootscope.analyze.captured import analyze_captured
    from bootscope.usecases.view_types import BootView

    boot = load_chain_capture(DATA / "debian-12-image-systemd-tcg.tsv")
    analysis = analyze_captured(
        boot.lines, host_start_ns=boot.host_start_ns, marker_regex=defaults.LOGIN_PROMPT
    )
    view = BootView("image boot", analysis.breakdown, analysis.lines, analysis.units)
    path = tmp_path / "image.html"
    path.write_text(render_boot_report(view, definitions=DEFINITIONS), encoding="utf-8")
    opened = open_page(path)
    page = opened.page
    # the unit bars are the timeline's last bar trace (after phases, initcalls, CPUs and gaps)
    unit_bars = page.evaluate(
        "[...document.querySelectorAll('#timeline .barlayer .trace')].pop().querySelectorAll('.point').length"
    )
    assert unit_bars == len(analysis.units) == 76
    ticks = page.evaluate("[...document.querySelectorAll('#timeline .ytick text')].map((t) => t.textContent)")
    # every unit keeps its label (besides phases, milestones, largest gaps)
    assert (
        len(ticks) == 76 + 3
        and "systemd-logind.service" in ticks
        and "system-serial\\x2dgetty.slice" in ticks
    )
    page.locator("#timeline").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "report-unit-lanes.png"), full_page=True)
    assert opened.errors == [] and opened.requests == [] and opened.dialogs == []

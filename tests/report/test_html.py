"""The HTML report: self-contained, log text only as escaped data, tables and data that match."""

from __future__ import annotations

import json
import re

from report_fixtures import HOSTILE, hand_view

from bootscope.metrics import DEFINITIONS
from bootscope.report.html import json_for_script, plotly_js, render_boot_report
from bootscope.report.views import drawable_initcalls
from bootscope.usecases.view_types import BootView


def _data_block(page: str) -> dict:  # type: ignore[type-arg]
    match = re.search(r'<script type="application/json" id="bootscope-data">(.*?)</script>', page, re.S)
    assert match is not None
    return json.loads(match.group(1))  # type: ignore[no-any-return]


def test_json_for_script_cannot_end_the_element() -> None:
    text = json_for_script({"x": "</script><!-- & \u2028 \u2029 é"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == {"x": "</script><!-- & \u2028 \u2029 é"}


def test_hostile_text_never_becomes_markup() -> None:
    page = render_boot_report(hand_view(), vs=hand_view("<b>two</b>", 1.2), definitions=DEFINITIONS)
    assert "<script>alert(1)" not in page
    assert "<b>two</b>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # the tables show it as text
    # exactly our three script elements: the data, Plotly and the report code
    assert len(re.findall(r"<script\b", page)) == 3
    data = _data_block(page)
    assert HOSTILE in data["boot"]["lines"]["x"]


def test_page_is_self_contained() -> None:
    page = render_boot_report(hand_view())
    assert plotly_js() in page  # the bundle is inlined (the browser test also blocks every request)
    ours = page.replace(plotly_js(), "")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", ours)
    assert "<link" not in ours


def test_data_matches_the_breakdown(smp4_view: BootView) -> None:
    page = render_boot_report(smp4_view, definitions=DEFINITIONS)
    data = _data_block(page)["boot"]
    calls = drawable_initcalls(smp4_view.breakdown)
    assert len(data["initcalls"]) == len(calls)
    # every initcall links to its own "initcall ... returned" line of the log
    for name, _start, _dur, _ret, _lane, line in data["initcalls"]:
        assert smp4_view.lines[line].text.startswith(f"initcall {name}+")
    assert data["lines"]["x"] == [line.text for line in smp4_view.lines]
    assert len(data["cpus"]) == 3
    assert "Biggest: calling  crypto_algapi_init" in page
    # only the metrics this boot has are defined (issue 26): its log holds "Run /init as init process"
    # (kernel_init_s) and a "BOOTSCOPE-MARKER uptime=4.19" line (userspace_s), nothing of a host or kexec
    defined = [name for name in DEFINITIONS if f"<dt>{name}</dt>" in page]
    assert defined == ["kernel_init_s", "userspace_s"]


def test_only_the_longest_initcalls_are_drawn_past_the_cap() -> None:
    import dataclasses

    from bootscope.model import Initcall, InitcallSummary
    from bootscope.report.html import MAX_INITCALL_BARS, boot_data

    view = hand_view()
    n = MAX_INITCALL_BARS + 5
    calls = tuple(Initcall(f"c{i}", i * 1e-3, (i * 7919) % n, 0, pid=1) for i in range(n))
    bd = dataclasses.replace(view.breakdown, initcalls=InitcallSummary(n, 1.0, (), (), calls[:10], calls))
    data = boot_data(dataclasses.replace(view, breakdown=bd))
    assert data["initcalls_all"] == n
    drawn = data["initcalls"]
    assert len(drawn) == MAX_INITCALL_BARS
    # the 5 shortest durations ((i * 7919) % n takes every value 0..n-1 once) are the ones left out
    assert sorted(c[2] for c in drawn) == list(range(5, n))
    assert [c[1] for c in drawn] == sorted(c[1] for c in drawn)  # still in start order

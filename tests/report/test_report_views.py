"""Per-line gaps, the seed-004 sentence and side-by-side rows, checked against hand computations."""

from __future__ import annotations

import pytest
from report_fixtures import hand_view

from bootscope.model import LogLine
from bootscope.report.views import delta_rows, format_duration, gap_sentence, line_gaps


def test_line_gaps_measure_from_the_latest_time() -> None:
    lines = [
        LogLine("a", 1.0),
        LogLine("untimed"),
        LogLine("b", 1.5),
        LogLine("back", 0.2),
        LogLine("c", 2.25),
    ]
    gaps = line_gaps(lines)
    assert [(g.index, g.text) for g in gaps] == [(0, "a"), (2, "b")]
    assert [g.duration_s for g in gaps] == pytest.approx([0.5, 0.75])


def test_sentence_names_the_biggest_gap_and_its_share() -> None:
    view = hand_view()
    # by hand: biggest gap 1.7 s of 2.6 s first-to-last = 65.4 %
    assert gap_sentence(view.breakdown, view.lines) == (
        "Total: 2.6 s. Biggest: initcall slow_init+0x0/0x10 returned 0 after 500000 usecs 1.7 s, 65 %"
    )


def test_sentence_on_a_real_boot(smp4_view) -> None:  # type: ignore[no-untyped-def]
    bd = smp4_view.breakdown
    top = max(bd.gaps, key=lambda g: g.duration_s)
    share = round(100 * top.duration_s / (bd.last_s - bd.first_s))
    assert gap_sentence(bd, smp4_view.lines).endswith(f"{format_duration(top.duration_s)}, {share} %")
    assert top.before.strip() in gap_sentence(bd, smp4_view.lines)


@pytest.mark.parametrize(("seconds", "text"), [(1.7, "1.7 s"), (0.9231, "923 ms"), (0.000045, "45 us")])
def test_format_duration(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


def test_delta_rows_pair_phases_and_rank_initcalls() -> None:
    a, b = hand_view("a"), hand_view("b", scale=1.5)
    rows = delta_rows(a.breakdown, b.breakdown)
    assert [(r.kind, r.name) for r in rows[:2]] == [("phase", "early"), ("phase", "initcalls")]
    assert rows[1].delta_s == pytest.approx(2.4 * 0.5)
    calls = [r for r in rows if r.kind == "initcall"]
    assert [r.name for r in calls] == ["slow_init", "async_probe", "con_init"]
    assert calls[0].delta_s == pytest.approx(0.25)

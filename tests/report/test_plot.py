"""Slide pictures: what each one shows (its bars, points, lines, labels and notes, read off the Figure
and compared with values worked out by hand from the fixture's log lines), then that the file is a
16:9 1920x1080 picture, labelled with units, and that bad names are refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from images import (
    assert_png_drawn,
    bars,
    lines_labelled,
    points,
    segments,
    texts,
    tick_labels,
    whiskers,
)
from report_fixtures import hand_view

from bootscope.errors import InputError
from bootscope.report.plot import plot_distribution, plot_ecdf, plot_gaps, plot_timeline

# hand_view's boot, read by hand from its lines (report_fixtures._LINES): con_init runs at 0.10 s for
# 1000 us as pid 0, slow_init at 0.30 s for 0.5 s as pid 1, async_probe at 0.40 s for 0.2 s as pid 77
# and fails (-19); CPU 1 comes up from 0.20 s in 0.05 s; the phases are early 0-0.2 s, initcalls
# 0.2-2.6 s; the breakdown's gaps are 1.7 s after slow_init returns and 0.2 s after the hostile line.
LANES = ["phases", "initcalls @ pid 0", "initcalls @ pid 1", "async @ pid 77", "CPU 1", "largest gaps"]
TIMELINE_BARS = [  # (lane, start s, length s)
    ("phases", 0.0, 0.2),
    ("phases", 0.2, 2.4),
    ("initcalls @ pid 0", 0.10, 0.001),
    ("initcalls @ pid 1", 0.30, 0.5),
    ("async @ pid 77", 0.40, 0.2),
    ("CPU 1", 0.20, 0.05),
    ("largest gaps", 0.80, 1.70),
    ("largest gaps", 0.60, 0.20),
]

# The timed lines in log order, keeping only those that do not step back in time (0.40, 0.45 and
# 0.60 come after 0.80): each bar runs from a line to the next such line.
GAP_BARS_MS = [  # (start s, length ms, the line that opens the silence)
    (0.0, 100.0, "Linux version 6.1.0-56-cloud-amd64"),
    (0.10, 1.0, "calling  con_init+0x0/0x22c @ 0"),
    (0.101, 99.0, "initcall con_init+0x0/0x22c returned 0 after 1000 usecs"),
    (0.20, 50.0, "smp: Bringing up secondary CPUs ..."),
    (0.25, 50.0, "smpboot: CPU 1 is now up"),
    (0.30, 500.0, "calling  slow_init+0x0/0x10 @ 1"),
    (0.80, 1700.0, "initcall slow_init+0x0/0x10 returned 0 after 500000 usecs"),
    (2.50, 100.0, "Freeing unused kernel image (initmem) memory: 2612K"),
]


def test_timeline_draws_each_phase_initcall_cpu_and_gap_on_its_lane(tmp_path: Path) -> None:
    out = tmp_path / "t.png"
    ax = plot_timeline(hand_view(), out).axes[0]
    assert tick_labels(ax, "y") == LANES
    assert ax.yaxis_inverted()  # phases on top
    drawn = bars(ax)
    assert [(LANES[round(b.y_centre)], b.x, b.width) for b in drawn] == [
        (lane, pytest.approx(start), pytest.approx(length)) for lane, start, length in TIMELINE_BARS
    ]
    by_lane = {LANES[round(b.y_centre)]: b for b in drawn}
    # The failing initcall stands out; the ones that returned 0 share one colour.
    assert drawn[2].colour == drawn[3].colour != by_lane["async @ pid 77"].colour
    assert drawn[0].colour != drawn[1].colour  # phases told apart
    notes = texts(ax)
    assert notes[:2] == ["early", "initcalls"]  # phase names on their bars
    # The largest gaps are annotated, largest first, with their line and length.
    assert notes[2].startswith("initcall slow_init+0x0/0x10 returned 0 ") and notes[2].endswith("  1.7 s")
    assert notes[3].startswith("evil: <script>alert(1)</script>") and notes[3].endswith("  200 ms")
    assert len(notes) == 4
    assert ax.get_title() == "Boot timeline: hand"
    assert ax.get_xlabel() == "time since kernel start (s)"
    assert_png_drawn(out, min_ink=0.05)


def test_timeline_scales_with_the_boot(tmp_path: Path) -> None:
    # The same boot, twice as slow: every bar starts twice as late and lasts twice as long.
    ax = plot_timeline(hand_view(scale=2.0), tmp_path / "t.svg").axes[0]
    assert [(b.x, b.width) for b in bars(ax)] == [
        (pytest.approx(2 * start), pytest.approx(2 * length)) for _, start, length in TIMELINE_BARS
    ]


def test_gap_chart_draws_the_time_until_the_next_line(tmp_path: Path) -> None:
    out = tmp_path / "g.png"
    ax = plot_gaps(hand_view(), out).axes[0]
    drawn = bars(ax)
    assert [(b.x, b.width, b.height, b.y) for b in drawn] == [
        (pytest.approx(start), pytest.approx(ms / 1e3), pytest.approx(ms), 0.0)
        for start, ms, _ in GAP_BARS_MS
    ]
    # The six longest are labelled, longest first: 1.7 s, 500 ms, the two 100 ms, 99 ms, a 50 ms one.
    notes = texts(ax)
    assert [note.rsplit("  ", 1)[1] for note in notes] == [
        "1.7 s",
        "500 ms",
        "100 ms",
        "100 ms",
        "99 ms",
        "50 ms",
    ]
    assert notes[0].startswith("initcall slow_init+0x0/0x10 returned 0 ")
    assert notes[1].startswith("calling  slow_init+0x0/0x10 @ 1")
    assert {notes[2][:14], notes[3][:14]} == {"Linux version ", "Freeing unused"}  # equal lengths
    assert notes[4].startswith("initcall con_init+0x0/0x22c returned 0 ")
    assert notes[5].startswith(("smp: Bringing up", "smpboot: CPU 1"))
    # Total 0 .. 2.6 s; the biggest gap (1.7 s) is 65 % of it.
    assert ax.get_title() == (
        "Total: 2.6 s. Biggest: initcall slow_init+0x0/0x10 returned 0 after 500000 usecs 1.7 s, 65 %"
    )
    assert ax.get_ylim()[0] == 0.0
    assert_png_drawn(out)


def test_gap_chart_svg_states_units_and_sentence(tmp_path: Path) -> None:
    out = tmp_path / "g.svg"
    plot_gaps(hand_view(), out)
    svg = out.read_text()
    assert "time until the next line (ms)" in svg
    assert "time of the line since kernel start (s)" in svg
    assert "Biggest: initcall slow_init+0x0/0x10 returned 0 after 500000 usecs 1.7 s, 65 %" in svg


def test_hostile_gap_label_is_escaped_text(tmp_path: Path) -> None:
    out = tmp_path / "t.svg"
    plot_timeline(hand_view(), out)  # the second-largest gap follows the hostile line
    svg = out.read_text()
    assert "<script>" not in svg
    assert "&lt;script&gt;alert(1)" in svg


VALUES = {"a": [1.0, 1.1, 1.2, 0.9], "b": [1.3, 1.4, 1.2]}


def test_distribution_draws_every_boot_and_the_median_with_its_interval(tmp_path: Path) -> None:
    out = tmp_path / "d.png"
    ax = plot_distribution(VALUES, "kernel_init_s", out, {"a": (1.05, 0.9, 1.2)}).axes[0]
    dots_a, dots_b = points(ax)
    assert list(dots_a[:, 1]) == VALUES["a"] and list(dots_b[:, 1]) == VALUES["b"]
    assert np.all(np.abs(dots_a[:, 0] - 0) <= 0.25 + 1e-9) and np.all(np.abs(dots_b[:, 0] - 1) <= 0.25 + 1e-9)
    assert tick_labels(ax) == ["a", "b"]
    # a's median (1.05 s) across its column, its interval 0.9 .. 1.2 s as a whisker; b has none.
    flat = [((x0, y0), (x1, y1)) for (x0, y0), (x1, y1) in segments(ax) if y0 == y1]
    assert flat == [((pytest.approx(-0.3), 1.05), (pytest.approx(0.3), 1.05))]
    assert whiskers(ax) == [((0.0, pytest.approx(0.9)), (0.0, pytest.approx(1.2)))]
    assert ax.get_ylabel() == "kernel_init_s (s)"
    assert ax.get_title() == "kernel_init_s: one dot per boot; bar: median with its interval"
    assert_png_drawn(out)


def test_ecdf_steps_through_each_variants_sorted_boots(tmp_path: Path) -> None:
    out = tmp_path / "e.png"
    ax = plot_ecdf(VALUES, "kernel_init_s", out).axes[0]
    steps = {label: (x, y) for label, x, y in lines_labelled(ax)}
    assert set(steps) == {"a (n=4)", "b (n=3)"}
    assert list(steps["a (n=4)"][0]) == [0.9, 1.0, 1.1, 1.2]
    assert list(steps["a (n=4)"][1]) == [0.25, 0.5, 0.75, 1.0]
    assert list(steps["b (n=3)"][0]) == [1.2, 1.3, 1.4]
    assert list(steps["b (n=3)"][1]) == pytest.approx([1 / 3, 2 / 3, 1.0])
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a (n=4)", "b (n=3)"]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("kernel_init_s (s)", "fraction of boots")
    assert_png_drawn(out)
    with pytest.raises(InputError, match="no values"):
        plot_ecdf({"a": []}, "kernel_init_s", tmp_path / "x.png")


def test_unknown_suffix_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"\.png or \.svg"):
        plot_timeline(hand_view(), tmp_path / "t.jpg")
    assert not (tmp_path / "t.jpg").exists()

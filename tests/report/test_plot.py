"""Slide pictures: 16:9 at 1920x1080, labelled with units, bad names refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from images import assert_png_drawn
from report_fixtures import hand_view

from bootscope.errors import InputError
from bootscope.report.plot import plot_distribution, plot_ecdf, plot_gaps, plot_timeline


def test_timeline_png_is_slide_sized(tmp_path: Path) -> None:
    out = tmp_path / "t.png"
    plot_timeline(hand_view(), out)
    assert_png_drawn(out, min_ink=0.05)


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


def test_distribution_and_ecdf(tmp_path: Path) -> None:
    values = {"a": [1.0, 1.1, 1.2, 0.9], "b": [1.3, 1.4, 1.2]}
    plot_distribution(values, "kernel_init_s", tmp_path / "d.png", {"a": (1.05, 0.9, 1.2)})
    plot_ecdf(values, "kernel_init_s", tmp_path / "e.png")
    for name in ("d.png", "e.png"):
        assert_png_drawn(tmp_path / name)
    with pytest.raises(InputError, match="no values"):
        plot_ecdf({"a": []}, "kernel_init_s", tmp_path / "x.png")


def test_unknown_suffix_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"\.png or \.svg"):
        plot_timeline(hand_view(), tmp_path / "t.jpg")
    assert not (tmp_path / "t.jpg").exists()

"""diff's own logic over BootParts: which gap lines are compared, the phase-order note, the sides."""

from __future__ import annotations

from pathlib import Path

import pytest
from images import assert_png_drawn, bars

from bootscope.errors import InputError
from bootscope.report.diff_plot import bar_rows, plot_diff
from bootscope.usecases.diff import BootParts, check_kinds, component_samples, diff_parts


def _boot(total: float, phases: dict[str, float], gaps: dict[str, float], top: set[str]) -> BootParts:
    parts = {("phase", k): v for k, v in phases.items()} | {("gap", k): v for k, v in gaps.items()}
    return BootParts(total, parts, "6.12.117", "boot", frozenset(top))


def test_only_gap_lines_among_some_boots_largest_are_compared() -> None:
    a = [_boot(1.0, {}, {"x": 0.5, "tiny": 0.001}, {"x"})]
    b = [_boot(1.1, {}, {"x": 0.6, "tiny": 0.001, "y": 0.2}, {"y"})]
    names = [(item.kind, item.name) for item in component_samples(a, b)]
    assert names == [("gap", "x"), ("gap", "y")]
    (x, y) = component_samples(a, b)
    assert (x.a, x.b, y.a, y.b, y.boots_a, y.boots_b) == ((0.5,), (0.6,), (), (0.2,), 1, 1)


def test_a_negative_phase_is_noted_and_bad_sides_refused() -> None:
    a = [_boot(1.5 + i / 100, {"setup": 0.3, "mm_init": 1.2}, {}, set()) for i in range(3)]
    b = [_boot(2.3 + i / 100, {"setup": 2.4, "mm_init": -0.03}, {}, set()) for i in range(3)]
    result = diff_parts(
        a,
        b,
        metric="kernel_init_s",
        names=("k61", "k612"),
        kinds=("phase",),
        source="test",
        alpha=0.05,
        fdr=0.05,
    )
    assert [note.split(":")[0] for note in result.notes] == ["k612"]
    assert "mm_init is negative in 3 boot(s)" in result.notes[0]
    with pytest.raises(InputError, match="at least 2"):
        diff_parts(
            a[:1],
            b,
            metric="kernel_init_s",
            names=("a", "b"),
            kinds=("phase",),
            source="t",
            alpha=0.05,
            fdr=0.05,
        )
    assert check_kinds([]) == ("phase", "initcall", "cpu", "gap", "unit", "bootloader")
    with pytest.raises(InputError):
        check_kinds(["phases"])


def test_bars_follow_diffs_ranking_and_name_what_is_left(tmp_path: Path) -> None:
    # 6 boots a side: setup grows by 0.3 s in every boot (moved), mm_init wobbles (not moved).
    a = [_boot(1.0 + i / 1000, {"setup": 0.2 + i / 1000, "mm_init": 0.8}, {}, set()) for i in range(6)]
    b = [
        _boot(1.35 + i / 1000, {"setup": 0.5 + i / 1000, "mm_init": 0.85 - (i % 2) / 10}, {}, set())
        for i in range(6)
    ]
    result = diff_parts(
        a, b, metric="kernel_init_s", names=("a", "b"), kinds=("phase",), source="t", alpha=0.05, fdr=0.05
    )
    rows = bar_rows(result, top=10)
    ranked = [f"{c.kind} {c.name}" for c in result.attribution.components]
    left = "unexplained (not by a moved phase)"  # the one unexplained figure, drawn always
    assert [row.label for row in rows] == ["total kernel_init_s", *ranked, left]
    assert rows[1].label == "phase setup" and rows[1].moved and rows[1].shift_s == pytest.approx(0.3)
    assert rows[-1].shift_s == pytest.approx(rows[0].shift_s - 0.3, abs=1e-6)
    assert [row.label for row in bar_rows(result, top=1)] == [
        "total kernel_init_s",
        "phase setup",
        left,
    ]
    png = tmp_path / "bars.png"
    drawn = sorted(bars(plot_diff(result, 10, png).axes[0]), key=lambda bar: -bar.y_centre)  # top first
    assert [bar.width for bar in drawn] == pytest.approx([row.shift_s for row in rows])
    assert drawn[1].width == pytest.approx(0.3)  # setup's bar, by hand
    assert_png_drawn(png)
    with pytest.raises(InputError, match="png"):
        plot_diff(result, 10, tmp_path / "bars.jpg")

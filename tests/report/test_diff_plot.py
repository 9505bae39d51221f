"""diff's bars (--plot): the total on top, then the components by the size of their move, faster and
slower alike, each bar as long as its shift with its interval as a whisker, and the unexplained part
last; the expected shifts are worked out by hand from the boots below."""

from __future__ import annotations

from pathlib import Path

import pytest
from images import assert_png_drawn, bars, tick_label_at, whiskers

from bootscope.report.diff_plot import plot_diff
from bootscope.stats.attribution import DiffResult
from bootscope.usecases.diff import BootParts, diff_parts

BOOTS = 6


def _result() -> DiffResult:
    """Six boots a side. In every boot of b: mm_init is 0.4 s shorter (0.8 -> 0.4, no spread), setup
    0.3 s longer, a second CPU appears (0.05 s), 'late' wobbles +-0.01 s around a's 0.5 s, and the
    total is 0.05 s shorter. So, by hand: shifts -0.4, +0.3, +0.05 (appeared), 0 (every pairwise
    difference is +-0.01, as many of each) and -0.05 for the total; the moved phases sum to -0.1, which
    leaves +0.05 of the total unexplained by a phase."""
    a, b = [], []
    for i in range(BOOTS):
        jitter = i / 1000
        a_parts = {("phase", "setup"): 0.2 + jitter, ("phase", "mm_init"): 0.8, ("phase", "late"): 0.5}
        b_parts = {
            ("phase", "setup"): 0.5 + jitter,
            ("phase", "mm_init"): 0.4,
            ("phase", "late"): 0.49 if i % 2 else 0.51,
            ("cpu", "cpu1"): 0.05,
        }
        a.append(BootParts(1.5 + jitter, a_parts, "6.12.117", "boot", frozenset()))
        b.append(BootParts(1.45 + jitter, b_parts, "6.12.117", "boot", frozenset()))
    return diff_parts(
        a,
        b,
        metric="kernel_init_s",
        names=("a", "b"),
        kinds=("phase", "cpu"),
        source="t",
        alpha=0.05,
        fdr=0.05,
    )


def test_bars_show_both_directions_ranked_by_size(tmp_path: Path) -> None:
    out = tmp_path / "bars.png"
    ax = plot_diff(_result(), 10, out).axes[0]
    label_at = tick_label_at(ax, "y")
    drawn = bars(ax)
    rows = [(label_at[round(bar.y_centre)], bar) for bar in sorted(drawn, key=lambda bar: -bar.y_centre)]
    assert [label for label, _ in rows[:-1]] == [
        "total kernel_init_s",
        "phase mm_init (moved)",  # the largest move, though it is a gain
        "phase setup (moved)",
        "cpu cpu1 (moved)",
        "phase late",
    ]
    assert rows[-1][0].startswith("unexplained")
    assert [bar.width for _, bar in rows] == pytest.approx([-0.05, -0.4, 0.3, 0.05, 0.0, 0.05], abs=1e-9)
    assert all(bar.x == 0.0 for bar in drawn)  # every bar grows from no change
    total, mm_init, setup, cpu1, late, left = (bar for _, bar in rows)
    assert mm_init.colour != setup.colour == cpu1.colour  # faster and slower told apart
    assert total.colour not in (mm_init.colour, setup.colour, left.colour)
    assert late.alpha < mm_init.alpha == setup.alpha  # not moved: pale
    assert cpu1.hatch == "//" and not any(bar.hatch for bar in (total, mm_init, setup, late, left))
    # Whiskers at each compared bar's row: mm_init's interval is the one point -0.4 (no spread on
    # either side); the others hold their shift; cpu1 appeared and has no interval.
    spans = {round(y0): (x0, x1) for (x0, y0), (x1, _) in whiskers(ax)}
    assert set(spans) == {round(bar.y_centre) for bar in (total, mm_init, setup, late)}
    assert spans[round(mm_init.y_centre)] == (pytest.approx(-0.4), pytest.approx(-0.4))
    for bar, shift in ((total, -0.05), (setup, 0.3), (late, 0.0)):
        low, high = spans[round(bar.y_centre)]
        assert low <= shift + 1e-12 and shift - 1e-12 <= high and high - low < 0.05
    assert ax.get_title() == "what moved kernel_init_s: b vs a"
    assert ax.get_xlabel().startswith("shift of b against a (s, b - a; whiskers: 95 % interval)")
    assert_png_drawn(out)


def test_top_keeps_the_largest_moves_and_the_unexplained_bar(tmp_path: Path) -> None:
    ax = plot_diff(_result(), 2, tmp_path / "bars.svg").axes[0]
    label_at = tick_label_at(ax, "y")
    labels = [label_at[round(bar.y_centre)] for bar in sorted(bars(ax), key=lambda bar: -bar.y_centre)]
    assert labels[:3] == ["total kernel_init_s", "phase mm_init (moved)", "phase setup (moved)"]
    assert len(labels) == 4 and labels[3].startswith("unexplained")

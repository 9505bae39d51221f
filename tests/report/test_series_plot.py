"""The series picture (history): every boot a dot at its position, the medians joined, each median's
interval a whisker, a dashed line and its label between the positions where the metric changed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from images import assert_png_drawn, lines_labelled, points, texts, tick_labels, whiskers

from bootscope.errors import InputError
from bootscope.report.series_plot import plot_series

NAMES = ["6.1.100", "6.1.101", "6.1.102"]
SAMPLES = [[2.0, 2.1, 2.05], [2.02, 2.08], [2.5, 2.6, 2.55, 2.52]]
MEDIANS = [(2.05, (2.0, 2.1)), (2.05, None), (2.535, (2.5, 2.6))]


def test_series_shows_each_position_its_median_and_the_change(tmp_path: Path) -> None:
    out = tmp_path / "s.png"
    ax = plot_series(NAMES, SAMPLES, MEDIANS, [(1, "+0.485 s, p=0.01")], "kernel_init_s", out).axes[0]
    dots = points(ax)
    assert [list(d[:, 1]) for d in dots] == SAMPLES
    for k, d in enumerate(dots):  # jittered around the position, never into the next one
        assert np.all(np.abs(d[:, 0] - k) <= 0.15 + 1e-9)
    ((label, xs, ys),) = lines_labelled(ax)
    assert (label, list(xs), list(ys)) == ("median", [0, 1, 2], [2.05, 2.05, 2.535])
    assert whiskers(ax) == [
        ((0.0, pytest.approx(2.0)), (0.0, pytest.approx(2.1))),
        ((2.0, pytest.approx(2.5)), (2.0, pytest.approx(2.6))),
    ]
    # The change after position 1: a vertical line half-way to position 2, with its shift and p.
    (change,) = [line for line in ax.lines if line.get_linestyle() == "--"]
    assert list(change.get_xdata()) == [1.5, 1.5]
    assert texts(ax) == ["+0.485 s, p=0.01"]
    assert tick_labels(ax) == NAMES
    assert ax.get_ylabel() == "kernel_init_s (s)"
    assert_png_drawn(out)


def test_series_without_change_draws_no_dashed_line(tmp_path: Path) -> None:
    ax = plot_series(NAMES[:2], SAMPLES[:2], MEDIANS[:2], [], "kernel_init_s", tmp_path / "s.svg").axes[0]
    assert not [line for line in ax.lines if line.get_linestyle() == "--"]
    assert texts(ax) == [] and tick_labels(ax) == NAMES[:2]


def test_series_refuses_uneven_inputs(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="one name"):
        plot_series(NAMES, SAMPLES[:2], MEDIANS, [], "kernel_init_s", tmp_path / "s.png")
    assert not (tmp_path / "s.png").exists()

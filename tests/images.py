"""Checks on pictures. What a plot shows is read off its matplotlib Figure (the bars, points, lines,
labels and notes it holds), for a test to compare with values it worked out itself; the written PNG
is only checked to be a real picture (decodes, has the expected size, is not blank)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def assert_png_drawn(path: Path, size_px: tuple[int, int] = (1920, 1080), min_ink: float = 0.01) -> None:
    """Assert ``path`` decodes as a PNG of ``size_px`` (width, height) on which at least ``min_ink`` of
    the pixels are not background and at least three colours appear (axes, text, data). A smoke test:
    what the picture shows is checked on its Figure (:func:`bars`, :func:`points`...)."""
    import matplotlib.image  # heavy: only for the tests that draw

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", path
    pixels = matplotlib.image.imread(path)
    height, width = pixels.shape[:2]
    assert (width, height) == size_px
    rgb = np.round(pixels[..., :3] * 255).astype(np.int64)
    flat = rgb.reshape(-1, 3)
    colours, counts = np.unique(flat, axis=0, return_counts=True)
    background = colours[np.argmax(counts)]
    ink = float(np.mean(np.any(flat != background, axis=1)))
    assert ink >= min_ink, f"{path}: only {ink:.2%} of the pixels are drawn"
    assert len(colours) >= 3, f"{path}: {len(colours)} colours"


def record_figures(monkeypatch: pytest.MonkeyPatch) -> list[Figure]:
    """Return a list that collects every matplotlib Figure saved in this process from now on (in the
    order saved), for a test that draws through the CLI to read what the picture holds."""
    from matplotlib.figure import Figure

    saved: list[Figure] = []
    original = Figure.savefig

    def savefig(self: Figure, *args: Any, **kwargs: Any) -> None:
        saved.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return saved


@dataclass(frozen=True, slots=True)
class Bar:
    """One drawn bar in data units: left edge ``x``, bottom ``y``, signed ``width`` and ``height``
    (a horizontal bar's value is its width, a vertical one's its height), face colour as ``#rrggbb``,
    its alpha and hatch."""

    x: float
    y: float
    width: float
    height: float
    colour: str
    alpha: float
    hatch: str | None

    @property
    def y_centre(self) -> float:
        """The bar's vertical middle (a horizontal bar's row)."""
        return self.y + self.height / 2


def bars(ax: Any) -> list[Bar]:
    """Return the bars drawn on ``ax`` by ``bar``/``barh``, in drawing order (spans left out)."""
    from matplotlib.colors import to_hex
    from matplotlib.container import BarContainer

    found = []
    for container in ax.containers:
        if isinstance(container, BarContainer):
            for patch in container:
                face = patch.get_facecolor()
                found.append(
                    Bar(
                        float(patch.get_x()),
                        float(patch.get_y()),
                        float(patch.get_width()),
                        float(patch.get_height()),
                        to_hex(face[:3]),
                        float(face[3]),
                        patch.get_hatch(),
                    )
                )
    return found


def points(ax: Any) -> list[np.ndarray]:
    """Return the (n, 2) x/y arrays of every scatter on ``ax``, in drawing order."""
    from matplotlib.collections import PathCollection

    return [np.asarray(c.get_offsets()) for c in ax.collections if isinstance(c, PathCollection)]


def whiskers(ax: Any) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """Return the error bars on ``ax`` as ((x0, y0), (x1, y1)) segments, in drawing order."""
    from matplotlib.container import ErrorbarContainer

    found = []
    for container in ax.containers:
        if isinstance(container, ErrorbarContainer):
            _, _, columns = container.lines
            for column in columns:
                for (x0, y0), (x1, y1) in column.get_segments():
                    found.append(((float(x0), float(y0)), (float(x1), float(y1))))
    return found


def segments(ax: Any) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """Return every straight segment of the line collections on ``ax`` (``hlines``, ``vlines``, error
    bars) as ((x0, y0), (x1, y1)), in drawing order."""
    from matplotlib.collections import LineCollection

    return [
        ((float(x0), float(y0)), (float(x1), float(y1)))
        for collection in ax.collections
        if isinstance(collection, LineCollection)
        for (x0, y0), (x1, y1) in collection.get_segments()
    ]


def texts(ax: Any) -> list[str]:
    """Return the strings of the texts and annotations placed on ``ax`` (not its labels or ticks)."""
    return [t.get_text() for t in ax.texts]


def tick_labels(ax: Any, axis: str = "x") -> list[str]:
    """Return the tick labels of ``ax``'s ``axis`` ("x" or "y"), in tick order."""
    ticks = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    return [t.get_text() for t in ticks]


def tick_label_at(ax: Any, axis: str = "x") -> dict[float, str]:
    """Return ``ax``'s tick labels on ``axis`` ("x" or "y") keyed by their position in data units."""
    ticks = ax.get_xticks() if axis == "x" else ax.get_yticks()
    return {float(tick): label for tick, label in zip(ticks, tick_labels(ax, axis), strict=True)}


def lines_labelled(ax: Any) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """Yield (label, x, y) of every line on ``ax`` that has a label of its own (matplotlib names the
    unlabelled ones ``_child...``)."""
    for line in ax.lines:
        label = line.get_label()
        if not label.startswith("_"):
            yield label, np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)

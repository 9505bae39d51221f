"""A metric across an ordered series (kernel versions): dots per boot, median with interval, and the
change points as vertical lines between positions. Plain inputs, so the report stage needs nothing
from the experiment that produced them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from bootscope.report.plot import COLORS, DPI, SLIDE_IN, _save, _short

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def plot_series(
    names: Sequence[str],
    samples: Sequence[Sequence[float]],
    medians: Sequence[tuple[float, tuple[float, float] | None]],
    change_after: Sequence[tuple[int, str]],
    metric: str,
    path: Path,
) -> Figure:
    """Write the series plot to ``path`` (.png or .svg): position i shows ``samples[i]`` (seconds)
    and ``medians[i]`` = (median, interval or None); ``change_after`` holds (index, label) for a
    change between positions index and index + 1. Returns the Figure drawn (closed, its artists
    readable). Raises InputError for a bad suffix or no data.
    """
    # Imported here, after bootscope.report.plot has chosen the Agg backend (no display needed).
    import matplotlib.pyplot as plt

    from bootscope.errors import InputError

    if not names or len(names) != len(samples) or len(names) != len(medians):
        raise InputError("a series plot needs one name, sample list and median per position")
    plt.rcParams.update({"font.size": 14, "axes.titlesize": 16, "axes.labelsize": 15})
    fig, ax = plt.subplots(figsize=SLIDE_IN, dpi=DPI, layout="constrained")
    for k, values in enumerate(samples):
        # Golden-ratio jitter: deterministic, so two plots of the same run are identical.
        xs = [k + (((i * 0.618034) % 1.0) - 0.5) * 0.3 for i in range(len(values))]
        ax.scatter(xs, list(values), s=30, alpha=0.6, color=COLORS[0])
    xs_med = list(range(len(medians)))
    ax.plot(xs_med, [m for m, _ in medians], color="#1d2433", lw=2, marker="o", label="median")
    for k, (median, ci) in enumerate(medians):
        if ci is not None:
            ax.errorbar([k], [median], yerr=[[median - ci[0]], [ci[1] - median]], color="#1d2433", capsize=8)
    for index, label in change_after:
        ax.axvline(index + 0.5, color=COLORS[4], lw=2, ls="--")
        ax.annotate(
            _short(label, 40),
            (index + 0.5, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(4, -18),
            textcoords="offset points",
            color=COLORS[4],
        )
    ax.set_xticks(range(len(names)), [_short(n, 18) for n in names], rotation=30, ha="right")
    ax.set_xlabel("position in the series")
    ax.set_ylabel(f"{metric} (s)")
    ax.set_title(f"{metric} per position: dots are boots, bars the median's interval, dashes change points")
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, path)

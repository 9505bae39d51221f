"""Static pictures for mail and slides (matplotlib, Agg backend): 16:9, labelled with units.

Each function draws one figure, writes it to ``path`` (the format follows the suffix: ``.png`` at
1920x1080 pixels, or ``.svg``) and returns that Figure, closed: its artists (bars, points, lines,
labels) stay readable, so a caller or a test can check what was drawn, not only that ink was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib

matplotlib.use("Agg")  # no display on a build machine; must precede pyplot
import matplotlib.pyplot as plt

from bootscope.errors import InputError
from bootscope.report.atomic import write_atomically
from bootscope.report.views import (
    drawable_initcalls,
    format_duration,
    gap_sentence,
    initcall_lane,
    line_gaps,
)
from bootscope.usecases.view_types import BootView

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SLIDE_IN = (1920 / 144, 1080 / 144)  # 16:9, the size of a widescreen slide
DPI = 144  # 13.333 in x 144 = 1920 px
FORMATS = (".png", ".svg")
COLORS = ("#2f6fdb", "#e08a1e", "#2a9d6e", "#8e5bd6", "#d1495b", "#3aa4c9", "#9c7a3c", "#5b6475")


def _short(text: str, n: int) -> str:
    # Matplotlib reads "$...$" as mathtext; a log line must print as it is.
    text = text.strip().replace("$", r"\$")
    return text if len(text) <= n else text[: n - 1] + "…"


def _figure() -> tuple[Any, Any]:
    # svg.fonttype none: text stays text in an SVG, editable on a slide and searchable.
    plt.rcParams.update({"font.size": 14, "axes.titlesize": 16, "axes.labelsize": 15, "svg.fonttype": "none"})
    return plt.subplots(figsize=SLIDE_IN, dpi=DPI, layout="constrained")


def _save(fig: Figure, path: Path) -> Figure:
    if path.suffix.lower() not in FORMATS:
        plt.close(fig)
        raise InputError(f"cannot write {path.name}: choose a .png or .svg file name")
    try:
        write_atomically(path, lambda temporary: fig.savefig(temporary, dpi=DPI))
    finally:
        plt.close(fig)
    return fig


def plot_timeline(view: BootView, path: Path) -> Figure:
    """Write the boot's timeline (phases, initcall lanes, CPU bring-up, largest gaps) to ``path``.

    The x axis is seconds since kernel start. Returns the Figure drawn (closed). Raises InputError for
    a suffix other than .png/.svg.
    """
    bd = view.breakdown
    calls = drawable_initcalls(bd)
    lanes = ["phases", *sorted({initcall_lane(c) for c in calls}, key=lambda n: (n.startswith("async"), n))]
    lanes += [f"CPU {c.cpu}" for c in bd.cpu_bringup.cpus if c.start_s is not None] + ["largest gaps"]
    row = {name: i for i, name in enumerate(lanes)}
    fig, ax = _figure()
    for i, phase in enumerate(p for p in bd.phases if p.start_s is not None and p.end_s is not None):
        assert phase.start_s is not None and phase.end_s is not None
        color = COLORS[i % len(COLORS)]
        ax.axvspan(phase.start_s, phase.end_s, color=color, alpha=0.08, lw=0)
        ax.barh(row["phases"], phase.end_s - phase.start_s, left=phase.start_s, color=color, height=0.7)
        ax.text(
            (phase.start_s + phase.end_s) / 2,
            row["phases"],
            _short(phase.name, 24),
            ha="center",
            va="center",
            fontsize=11,
            color="white",
            clip_on=True,
        )
    for call in calls:
        assert call.start_s is not None and call.duration_us is not None
        color = COLORS[0] if not call.ret else "#c8372d"
        ax.barh(
            row[initcall_lane(call)],
            max(call.duration_us / 1e6, 1e-6),
            left=call.start_s,
            color=color,
            height=0.7,
        )
    for cpu in bd.cpu_bringup.cpus:
        if cpu.start_s is not None and cpu.duration_s is not None:
            ax.barh(row[f"CPU {cpu.cpu}"], cpu.duration_s, left=cpu.start_s, color=COLORS[2], height=0.7)
    ranked = sorted(bd.gaps, key=lambda g: g.duration_s, reverse=True)
    for rank, gap in enumerate(ranked):
        ax.barh(row["largest gaps"], gap.duration_s, left=gap.start_s, color="#c8372d", height=0.7)
        if rank < 4:
            ax.annotate(
                f"{_short(gap.before, 40)}  {format_duration(gap.duration_s)}",
                (gap.start_s + gap.duration_s / 2, row["largest gaps"] - 0.35),
                xytext=(0, 18 + 22 * rank),
                textcoords="offset points",
                ha="center",
                fontsize=11,
                bbox={"boxstyle": "round", "fc": "white", "ec": "#c8372d"},
                arrowprops={"arrowstyle": "-", "color": "#c8372d"},
            )
    ax.set_yticks(range(len(lanes)), lanes)
    ax.invert_yaxis()
    ax.set_xlabel("time since kernel start (s)")
    ax.set_title(f"Boot timeline: {_short(view.label, 60)}")
    ax.grid(axis="x", alpha=0.3)
    return _save(fig, path)


def plot_gaps(view: BootView, path: Path, top: int = 6) -> Figure:
    """Write the gap chart to ``path``: every timed line a bar of the time until the next (ms).

    The ``top`` longest are labelled with their line; the title is the total-and-biggest sentence.
    Returns the Figure drawn (closed). Raises InputError for a suffix other than .png/.svg.
    """
    gaps = line_gaps(view.lines)
    fig, ax = _figure()
    ax.bar(
        [g.start_s for g in gaps],
        [g.duration_s * 1e3 for g in gaps],
        width=[g.duration_s for g in gaps],
        align="edge",
        color=COLORS[0],
        lw=0,
    )
    for rank, gap in enumerate(sorted(gaps, key=lambda g: g.duration_s, reverse=True)[:top]):
        ax.annotate(
            f"{_short(gap.text, 44)}  {format_duration(gap.duration_s)}",
            (gap.start_s + gap.duration_s / 2, gap.duration_s * 1e3),
            xytext=(-30 if rank % 2 else 30, 12 + 16 * rank),
            textcoords="offset points",
            ha="center",
            fontsize=11,
            bbox={"boxstyle": "round", "fc": "white", "ec": "#9aa3b5"},
            arrowprops={"arrowstyle": "-", "color": "#5b6475"},
        )
    ax.set_xlabel("time of the line since kernel start (s)")
    ax.set_ylabel("time until the next line (ms)")
    ax.set_title(_short(gap_sentence(view.breakdown, view.lines), 110) or "no timed lines")
    ax.set_ylim(bottom=0)
    ax.margins(y=0.25)
    return _save(fig, path)


def plot_distribution(
    values_by_variant: Mapping[str, Sequence[float]],
    metric: str,
    path: Path,
    medians: Mapping[str, tuple[float, float | None, float | None]] | None = None,
) -> Figure:
    """Write a strip plot of ``metric`` (seconds) per variant, with median and interval, to ``path``.

    ``medians`` maps variant -> (median, low, high) from the stats stage; without it no median is
    drawn. Returns the Figure drawn (closed). Raises InputError when there is no value at all or the
    suffix is not .png/.svg.
    """
    if not any(values_by_variant.values()):
        raise InputError(f"no values of {metric} to plot")
    fig, ax = _figure()
    for k, (variant, values) in enumerate(values_by_variant.items()):
        xs = [k + (((i * 0.618034) % 1.0) - 0.5) * 0.5 for i in range(len(values))]
        ax.scatter(xs, values, s=36, alpha=0.65, color=COLORS[k % len(COLORS)], label=variant)
        if medians and variant in medians:
            med, low, high = medians[variant]
            ax.hlines(med, k - 0.3, k + 0.3, color="#1d2433", lw=3)
            if low is not None and high is not None:
                ax.errorbar([k], [med], yerr=[[med - low], [high - med]], color="#1d2433", capsize=12, lw=2)
    ax.set_xticks(range(len(values_by_variant)), [_short(v, 30) for v in values_by_variant])
    ax.set_xlabel("variant")
    ax.set_ylabel(f"{metric} (s)")
    ax.set_title(f"{metric}: one dot per boot" + ("; bar: median with its interval" if medians else ""))
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, path)


def plot_ecdf(values_by_variant: Mapping[str, Sequence[float]], metric: str, path: Path) -> Figure:
    """Write the empirical CDF of ``metric`` (seconds) per variant to ``path``.

    Returns the Figure drawn (closed). Raises InputError when there is no value at all or the suffix
    is not .png/.svg.
    """
    if not any(values_by_variant.values()):
        raise InputError(f"no values of {metric} to plot")
    fig, ax = _figure()
    for k, (variant, values) in enumerate(values_by_variant.items()):
        ys = sorted(values)
        if ys:
            ax.step(
                ys,
                [(i + 1) / len(ys) for i in range(len(ys))],
                where="post",
                lw=2.5,
                color=COLORS[k % len(COLORS)],
                label=f"{variant} (n={len(ys)})",
            )
    ax.set_xlabel(f"{metric} (s)")
    ax.set_ylabel("fraction of boots")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"Empirical CDF of {metric}")
    ax.legend()
    ax.grid(alpha=0.3)
    return _save(fig, path)

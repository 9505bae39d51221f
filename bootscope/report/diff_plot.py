"""What got slower, drawn: the total's shift and the components that explain it as horizontal bars,
ranked as `diff` ranks them (by the size of the move, faster and slower alike), each with its
interval; components that moved at the stated FDR in a strong colour, the rest pale,
appeared/disappeared ones hatched, and the one unexplained figure (``Attribution.unexplained_s``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bootscope.report.diff_out import guard_lines, offset_sentence
from bootscope.report.plot import COLORS, DPI, SLIDE_IN, _save, _short
from bootscope.stats.attribution import DiffResult
from bootscope.stats.compare import FASTER, SLOWER

if TYPE_CHECKING:
    from matplotlib.figure import Figure

TOTAL_KIND = "total"
LEFT_KIND = "left"


@dataclass(frozen=True, slots=True)
class BarRow:
    """One bar: its label, kind (a component kind, ``total`` or ``left``), shift (s, b - a) with its
    interval (None where there is none), whether it moved and its status (compared, appeared...)."""

    label: str
    kind: str
    shift_s: float
    ci_s: tuple[float, float] | None
    moved: bool
    status: str


def bar_rows(result: DiffResult, top: int) -> list[BarRow]:
    """Return the bars of ``result``: the total first, then the ``top`` components in diff's order
    (the largest moves either way; components without a shift left out), then the one unexplained
    figure: what the moved components of ``explained_kind`` leave of the total."""
    attribution = result.attribution
    total = attribution.total
    rows = [
        BarRow(
            f"total {result.metric}",
            TOTAL_KIND,
            float(total.shift_estimate or 0.0),
            total.shift_ci,
            total.verdict in (FASTER, SLOWER),
            total.verdict,
        )
    ]
    shown = [c for c in attribution.components if c.shift_s is not None][:top]
    rows += [
        BarRow(f"{c.kind} {c.name}", c.kind, float(c.shift_s or 0.0), c.shift_ci_s, c.moved, c.status)
        for c in shown
    ]
    if attribution.unexplained_s is not None:
        label = f"unexplained (not by a moved {attribution.explained_kind})"
        rows.append(BarRow(label, LEFT_KIND, float(attribution.unexplained_s), None, False, "left"))
    return rows


def plot_diff(result: DiffResult, top: int, path: Path) -> Figure:
    """Write the bars of ``result`` (see :func:`bar_rows`) to ``path`` (.png or .svg, 1920 x 1080
    pixels), the total on top; return the Figure drawn (closed, its artists readable). Raises
    InputError for another suffix."""
    import matplotlib.pyplot as plt

    rows = bar_rows(result, top)
    plt.rcParams.update({"font.size": 13, "axes.titlesize": 16, "axes.labelsize": 14})
    fig, ax = plt.subplots(figsize=SLIDE_IN, dpi=DPI, layout="constrained")
    ys = list(range(len(rows)))[::-1]  # the total on top
    for y, row in zip(ys, rows, strict=True):
        if row.kind == TOTAL_KIND:
            color, alpha = "#1d2433", 1.0
        elif row.kind == LEFT_KIND:
            color, alpha = COLORS[7], 0.5
        else:
            color = COLORS[4] if row.shift_s > 0 else COLORS[2]
            alpha = 1.0 if row.moved else 0.35
        hatch = "//" if row.status in ("appeared", "disappeared") else None
        ax.barh(y, row.shift_s, color=color, alpha=alpha, hatch=hatch, edgecolor=color, height=0.7)
        if row.ci_s is not None:
            low, high = row.ci_s
            ax.errorbar(
                [row.shift_s],
                [y],
                xerr=[[max(0.0, row.shift_s - low)], [max(0.0, high - row.shift_s)]],
                color="#1d2433",
                capsize=5,
                lw=1.5,
            )
    ax.axvline(0.0, color="#1d2433", lw=1)
    labels = [
        _short(row.label, 48) + (" (moved)" if row.moved and row.kind != TOTAL_KIND else "") for row in rows
    ]
    ax.set_yticks(ys, labels)
    ax.set_xlabel(
        f"shift of {result.variant} against {result.baseline} (s, b - a; whiskers: 95 % interval)\n"
        f"strong: moved at FDR {result.attribution.fdr:g}; pale: not; hatched: appeared or"
        " disappeared; red slower, green faster"
    )
    ax.set_title(_short(f"what moved {result.metric}: {result.variant} vs {result.baseline}", 90))
    said = [line for line in (offset_sentence(result), *guard_lines(result)[:1]) if line]
    if said:
        fig.suptitle("\n".join(_short(line, 160) for line in said), fontsize=11, x=0.01, ha="left")
    ax.grid(axis="x", alpha=0.3)
    return _save(fig, path)

"""An HTML page for a latency experiment: log-y histogram overlays (OSADL style) and survival
functions per variant (all runs and threads pooled), the result table and the warnings. Rendering only."""

from __future__ import annotations

import html
import io
from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from bootscope.report.atomic import write_atomically
from bootscope.report.latency_runs_out import latency_runs_text

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from bootscope.usecases.latency import LatencyRunsResult


def _draw(ax: Axes, result: LatencyRunsResult, survival: bool) -> None:
    """Draw one overlay on ``ax``: every variant's pooled histogram, or its survival function."""
    for variant in result.variants:
        counts = variant.counts
        if counts.size == 0:
            continue
        x = np.arange(counts.size)
        if survival:
            total = counts.sum() + variant.overflow
            beyond = (total - np.cumsum(counts)) / max(total, 1)  # P(latency > x us)
            ax.step(x, np.where(beyond > 0, beyond, np.nan), where="post", label=variant.name)
        else:
            ax.step(x, np.where(counts > 0, counts, np.nan), where="mid", label=variant.name)
    ax.set_yscale("log")
    ax.set_xlabel("latency (us)")
    ax.set_ylabel("P(latency > x)" if survival else "samples (log)")
    ax.set_title("survival function per variant" if survival else "latency histogram per variant")
    ax.legend()


def _svg(result: LatencyRunsResult, survival: bool) -> str:
    plt.rcParams.update({"svg.fonttype": "none"})
    fig, ax = plt.subplots(figsize=(10, 5), layout="constrained")
    _draw(ax, result, survival)
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg")
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def write_latency_png(result: LatencyRunsResult, path: Path) -> None:
    """Write a 1920x1080 PNG for slides: the histogram and survival overlays side by side, titled with
    the run and the tool; atomically."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(19.2, 10.8), dpi=100, layout="constrained")
    _draw(left, result, survival=False)
    _draw(right, result, survival=True)
    fig.suptitle(f"bootscope latency run {result.experiment_id} ({result.tool})", fontsize=20)

    def write(temporary: Path) -> None:
        fig.savefig(temporary, format="png", dpi=100)

    try:
        write_atomically(path, write)
    finally:
        plt.close(fig)


def latency_html(result: LatencyRunsResult) -> str:
    """Return the page: two overlays (inline SVG) and the text table with its warnings."""
    return (
        "<!doctype html><meta charset=utf-8>"
        f"<title>bootscope latency run {result.experiment_id}</title>"
        f"<h1>Latency run {result.experiment_id} ({html.escape(result.tool)})</h1>"
        f"{_svg(result, survival=False)}{_svg(result, survival=True)}"
        f"<pre>{html.escape(latency_runs_text(result))}</pre>"
    )


def write_latency_html(result: LatencyRunsResult, path: Path) -> None:
    """Write :func:`latency_html` to ``path`` atomically."""
    page = latency_html(result)

    def write(temporary: Path) -> None:
        temporary.write_text(page)

    write_atomically(path, write)

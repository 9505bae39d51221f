"""`bootscope report`, `trace` and `plot`: pictures of a boot log or of a stored run."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from bootscope.cli.options import InputFormatOpt, resolve_formats
from bootscope.defaults import ALPHA, DEFAULT_DB
from bootscope.errors import InputError
from bootscope.metrics import DEFAULT_METRIC, DEFINITIONS
from bootscope.report.atomic import write_text_atomically
from bootscope.report.console import error_console
from bootscope.report.html import render_boot_report, render_run_report
from bootscope.report.trace import render_trace

LogsArg = Annotated[
    list[Path] | None, typer.Argument(help="Kernel log file(s); '-' reads stdin.", show_default=False)
]
RunOpt = Annotated[str | None, typer.Option("--run", help="A stored run: its id or 'latest'.")]
DbOpt = Annotated[str, typer.Option("--db", help="Store: SQLite file or database URL.")]
BootOpt = Annotated[
    int | None, typer.Option("--boot", help="Which boot: 1-based for logs, the run's index for --run.")
]
OutFmtOpt = Annotated[
    str | None, typer.Option("--format", help="Output format (the only one for this command; see -o).")
]


class PlotKind(StrEnum):
    timeline = "timeline"
    gaps = "gaps"
    distribution = "distribution"
    ecdf = "ecdf"


def report(
    logs: LogsArg = None,
    output: Annotated[Path, typer.Option("-o", "--output", help="HTML file to write.")] = Path("report.html"),
    boot: BootOpt = None,
    vs: Annotated[Path | None, typer.Option("--vs", help="A second log to compare side by side.")] = None,
    run: RunOpt = None,
    db: DbOpt = DEFAULT_DB,
    output_format: OutFmtOpt = None,
    input_format: InputFormatOpt = "auto",
) -> None:
    """Write one self-contained HTML report (timeline, gap chart, log) of a boot log or a stored run."""
    from bootscope.usecases.views import report_view  # scipy, sqlalchemy: only when run

    _, fmt = resolve_formats(output_format, input_format, ("html",), "html")
    view = report_view(logs, run, db, boot=boot, vs=vs, fmt=fmt, alpha=ALPHA)
    if view.run is not None:
        write_text_atomically(output, render_run_report(view.run, definitions=DEFINITIONS, tune=view.tune))
        what = f"{len(view.run.samples)} boots of {len(view.run.variants)} variant(s)"
    else:
        assert view.boot is not None
        page = render_boot_report(view.boot, vs=view.vs, others=list(view.others), definitions=DEFINITIONS)
        write_text_atomically(output, page)
        what = f"{view.boot.label}, {len(view.boot.lines)} lines"
    error_console().print(f"wrote {escape(str(output))} ({escape(what)})")


def trace(
    logs: LogsArg = None,
    output: Annotated[Path, typer.Option("-o", "--output", help="JSON file to write.")] = Path("boot.json"),
    boot: BootOpt = None,
    run: RunOpt = None,
    db: DbOpt = DEFAULT_DB,
    output_format: OutFmtOpt = None,
    input_format: InputFormatOpt = "auto",
) -> None:
    """Write one boot as Chrome trace event JSON (open it in ui.perfetto.dev or chrome://tracing)."""
    from bootscope.usecases.views import boot_view

    _, fmt = resolve_formats(output_format, input_format, ("json",), "json")
    view = boot_view(logs, run, db, boot, fmt)
    write_text_atomically(output, render_trace(view.breakdown, view.lines, view.label, view.units))
    error_console().print(f"wrote {escape(str(output))} ({escape(view.label)})")


def plot(
    logs: LogsArg = None,
    kind: Annotated[PlotKind, typer.Option("--kind", help="What to draw.")] = PlotKind.timeline,
    output: Annotated[Path, typer.Option("-o", "--output", help="A .png or .svg file.")] = Path("plot.png"),
    metric: Annotated[str, typer.Option("--metric", help="Metric for distribution/ecdf.")] = DEFAULT_METRIC,
    boot: BootOpt = None,
    run: RunOpt = None,
    db: DbOpt = DEFAULT_DB,
    output_format: Annotated[
        str | None, typer.Option("--format", help="Output format: png or svg (default: -o's suffix).")
    ] = None,
    input_format: InputFormatOpt = "auto",
) -> None:
    """Write a 16:9 picture for slides or mail: a boot's timeline or gap chart, or a metric's
    distribution or ECDF (per variant of a run, or per log file with each boot one sample)."""
    from bootscope.report import plot as plots  # matplotlib: only when run
    from bootscope.usecases.views import boot_view, metric_values

    picture, fmt = resolve_formats(output_format, input_format, ("png", "svg"), "")
    if picture and output.suffix.lower() != f".{picture}":
        if output != Path("plot.png"):
            raise InputError(f"--format {picture} and -o {output} disagree: name the file .{picture}")
        output = output.with_suffix(f".{picture}")
    if output.suffix.lower() not in plots.FORMATS:
        raise InputError(f"-o {output}: choose a .png or .svg file name")
    if kind in (PlotKind.timeline, PlotKind.gaps):
        view = boot_view(logs, run, db, boot, fmt)
        (plots.plot_timeline if kind is PlotKind.timeline else plots.plot_gaps)(view, output)
    else:
        found = metric_values(logs, run, db, metric, fmt=fmt, alpha=ALPHA)
        if kind is PlotKind.distribution:
            plots.plot_distribution(found.values, metric, output, found.medians)
        else:
            plots.plot_ecdf(found.values, metric, output)
    error_console().print(f"wrote {escape(str(output))}")

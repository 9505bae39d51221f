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
from bootscope.usecases.view_types import BootView

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


def _write(path: Path, text: str) -> None:
    write_text_atomically(path, text)


def _one_source(logs: list[Path] | None, run: str | None) -> list[Path]:
    if run is not None and logs:
        raise InputError("give either log files or --run, not both")
    if run is None and not logs:
        raise InputError("give a log file or --run ID")
    return logs or []


def _boot_of(logs: list[Path] | None, run: str | None, db: str, boot: int | None, fmt: str) -> BootView:
    from bootscope.store.db import Store
    from bootscope.usecases import views as inputs  # scipy, sqlalchemy: only when run

    paths = _one_source(logs, run)
    if run is None:
        return inputs.pick_boot(inputs.boots_from_logs(paths, fmt), boot or 1)
    with Store.open(db) as store:
        exp = store.experiment(run)
        records = store.boots(exp.id)
        if boot is None:
            ok = [b for b in records if b.outcome == "ok" and not b.superseded and not b.warmup]
            if not ok:
                raise InputError(f"run {exp.id} has no boot that ended OK; choose one with --boot")
            boot = ok[0].index
        return inputs.stored_boot(store, exp.id, boot, records)


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
    from bootscope.usecases import views as inputs

    _, fmt = resolve_formats(output_format, input_format, ("html",), "html")
    from bootscope.store.db import Store

    paths = _one_source(logs, run)
    if run is not None:
        if vs is not None:
            raise InputError("--vs compares two logs; for a run the comparison table is already there")
        with Store.open(db) as store:
            view = inputs.run_view(store, run, ALPHA, with_diffs=True)
        _write(output, render_run_report(view, definitions=DEFINITIONS))
        what = f"{len(view.samples)} boots of {len(view.variants)} variant(s)"
    else:
        views = inputs.boots_from_logs(paths, fmt)
        main = inputs.pick_boot(views, boot or 1)
        other = inputs.pick_boot(inputs.boots_from_logs([vs], fmt), 1) if vs is not None else None
        others = [v for v in views if v is not main]
        _write(output, render_boot_report(main, vs=other, others=others, definitions=DEFINITIONS))
        what = f"{main.label}, {len(main.lines)} lines"
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
    _, fmt = resolve_formats(output_format, input_format, ("json",), "json")
    view = _boot_of(logs, run, db, boot, fmt)
    _write(output, render_trace(view.breakdown, view.lines, view.label, view.units))
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

    picture, fmt = resolve_formats(output_format, input_format, ("png", "svg"), "")
    if picture and output.suffix.lower() != f".{picture}":
        if output != Path("plot.png"):
            raise InputError(f"--format {picture} and -o {output} disagree: name the file .{picture}")
        output = output.with_suffix(f".{picture}")
    if output.suffix.lower() not in plots.FORMATS:
        raise InputError(f"-o {output}: choose a .png or .svg file name")
    if kind in (PlotKind.timeline, PlotKind.gaps):
        view = _boot_of(logs, run, db, boot, fmt)
        (plots.plot_timeline if kind is PlotKind.timeline else plots.plot_gaps)(view, output)
    else:
        values, medians = _values(logs, run, db, metric, fmt)
        if kind is PlotKind.distribution:
            plots.plot_distribution(values, metric, output, medians)
        else:
            plots.plot_ecdf(values, metric, output)
    error_console().print(f"wrote {escape(str(output))}")


def _values(
    logs: list[Path] | None, run: str | None, db: str, metric: str, fmt: str
) -> tuple[dict[str, list[float]], dict[str, tuple[float, float | None, float | None]]]:
    from bootscope.store.db import Store
    from bootscope.usecases import views as inputs

    if metric not in DEFINITIONS:
        raise InputError(f"--metric {metric}: choose one of {', '.join(DEFINITIONS)}")
    paths = _one_source(logs, run)
    if run is None:
        values: dict[str, list[float]] = {}
        for path in paths:
            for view in inputs.boots_from_logs([path], fmt):
                value = getattr(view.breakdown.metrics, metric, None)
                if value is not None:
                    values.setdefault(path.name, []).append(value)
        return values, {}
    with Store.open(db) as store:
        view_run = inputs.run_view(store, run, ALPHA, with_example=False)
    values = {v: [] for v in view_run.variants}
    for sample in view_run.samples:
        value = sample.metrics.get(metric)
        if value is not None and sample.outcome.value == "ok" and not sample.warmup:
            values.setdefault(sample.variant, []).append(value)
    medians = {s.name: (s.median, *(s.median_ci or (None, None))) for s in view_run.summaries.get(metric, ())}
    return values, medians

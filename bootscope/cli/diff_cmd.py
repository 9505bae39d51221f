"""`bootscope diff`: what got slower, every component compared."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bootscope import defaults
from bootscope.cli import options
from bootscope.metrics import DEFAULT_METRIC
from bootscope.report import notes

DIFF_FORMATS = ("table", "json", "mail", "html")

By = Annotated[
    list[str] | None,
    typer.Option(
        "--by",
        help="Component kinds: phase, initcall, gap, cpu, unit, bootloader (repeat; default: all those"
        " the metric is made of).",
    ),
]
Metric = Annotated[str, typer.Option(help="The total whose shift is decomposed.")]


def diff(
    run: Annotated[str | None, typer.Argument(help="A stored run's id or 'latest'.")] = None,
    a_logs: options.ALogs = None,
    b_logs: options.BLogs = None,
    baseline: Annotated[
        str | None, typer.Option(help="RUN's variant to compare with (default: first).")
    ] = None,
    variant: Annotated[str | None, typer.Option(help="RUN's variant to explain (default: second).")] = None,
    by: By = None,
    top: Annotated[int, typer.Option("--top", help="Components shown.")] = 20,
    metric: Metric = DEFAULT_METRIC,
    alpha: Annotated[
        float, typer.Option(help="Significance level of the total and the intervals.")
    ] = defaults.ALPHA,
    fdr: Annotated[float, typer.Option(help="False discovery rate over the components.")] = defaults.ALPHA,
    db: options.Db = defaults.DEFAULT_DB,
    fmt: Annotated[str, options.format_option(DIFF_FORMATS, "table")] = "table",
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write here instead of stdout.")
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option("--plot", help="Also draw the total and the --top components as bars (.png or .svg)."),
    ] = None,
) -> None:
    """What moved: every phase, initcall, CPU, gap and unit compared, largest move first, either way."""
    from bootscope.report.diff_formats import write_diff
    from bootscope.usecases.diff import diff as diff_inputs

    options.check_format(fmt, DIFF_FORMATS)
    result = diff_inputs(
        run, a_logs, b_logs, db=db, metric=metric, by=by or [], top=top, baseline=baseline,
        variant=variant, alpha=alpha, fdr=fdr, warn=notes.warning,
    )  # fmt: skip
    write_diff(result, fmt, top, output, plot)

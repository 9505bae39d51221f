"""`bootscope diff`, `bootscope baseline save` and `bootscope check`: what got slower, and reference
values a CI can check new boots against (exit 0 pass, 1 regression, 125 cannot tell)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from bootscope import defaults
from bootscope.cli import options
from bootscope.metrics import DEFAULT_METRIC
from bootscope.report import notes

DIFF_FORMATS = ("table", "json", "mail", "html")
CHECK_FORMATS = ("table", "json")

By = Annotated[
    list[str] | None,
    typer.Option("--by", help="Component kinds: phase, initcall, gap, cpu, unit (repeat; default: all)."),
]
Metric = Annotated[str, typer.Option(help="The total whose shift is decomposed.")]

baseline_app = typer.Typer(
    name="baseline",
    help="Save a stored variant's boots as reference values for `bootscope check`.",
    no_args_is_help=True,
    rich_markup_mode=None,
    add_completion=False,
)


def diff(
    run: Annotated[str | None, typer.Argument(help="A stored run's id or 'latest'.")] = None,
    a_logs: Annotated[
        list[Path] | None, typer.Option("--a-logs", help="Side a: a log file or directory (repeat).")
    ] = None,
    b_logs: Annotated[
        list[Path] | None, typer.Option("--b-logs", help="Side b: a log file or directory (repeat).")
    ] = None,
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
    """What got slower: every phase, initcall, CPU, gap and unit compared, ranked by share of the total."""
    from bootscope.report.diff_formats import write_diff
    from bootscope.usecases.diff import diff as diff_inputs

    options.check_format(fmt, DIFF_FORMATS)
    result = diff_inputs(
        run, a_logs, b_logs, db=db, metric=metric, by=by or [], top=top, baseline=baseline,
        variant=variant, alpha=alpha, fdr=fdr, warn=notes.warning,
    )  # fmt: skip
    write_diff(result, fmt, top, output, plot)


@baseline_app.command("save")
def baseline_save(
    source: Annotated[str, typer.Argument(help="RUN or RUN:VARIANT (RUN: an id or 'latest').")],
    output: Annotated[Path, typer.Option("-o", "--output", help="The reference file to write (JSON).")],
    db: options.Db = defaults.DEFAULT_DB,
) -> None:
    """Write a stored variant's samples (every metric, every component) as a versioned reference file."""
    from bootscope.report.atomic import write_text_atomically
    from bootscope.report.check_out import reference_text, saved_line
    from bootscope.usecases.check import save_baseline

    saved = save_baseline(source, db)
    write_text_atomically(output, reference_text(saved.document))
    print(saved_line(output, saved), file=sys.stderr)


def check(
    inputs: Annotated[list[str], typer.Argument(help="RUN[:VARIANT], or log files and directories.")],
    against: Annotated[Path, typer.Option("--against", help="The reference file (baseline save).")],
    threshold: Annotated[
        str, typer.Option(help="Slower by more than this is a regression: 5% or 0.05.")
    ] = "5%",
    min_shift: Annotated[
        str, typer.Option("--min-shift", help="Smallest shift a component must exceed: 1ms, 0.5ms, ...")
    ] = "1ms",
    metric: Metric = DEFAULT_METRIC,
    alpha: Annotated[
        float, typer.Option(help="Significance level (FDR over the components).")
    ] = defaults.ALPHA,
    db: options.Db = defaults.DEFAULT_DB,
    fmt: Annotated[str, options.format_option(CHECK_FORMATS, "table")] = "table",
) -> int:
    """For CI: new boots against a reference; exit 0 pass, 1 regression (named), 125 cannot tell."""
    from bootscope.report.check_out import check_json, render_check
    from bootscope.report.console import output_console
    from bootscope.usecases.check import check as check_inputs

    options.check_format(fmt, CHECK_FORMATS)
    result = check_inputs(
        inputs, against, threshold=threshold, min_shift=min_shift, metric=metric, alpha=alpha, db=db,
        warn=notes.warning,
    )  # fmt: skip
    if fmt == "json":
        print(check_json(result))
    else:
        render_check(result, output_console())
    print(f"bootscope check: {result.message}", file=sys.stderr)
    return result.exit_code

"""``bootscope latency analyze FILE...``: tail latency tables from cyclictest, oslat and rtla output."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from bootscope.cli import options
from bootscope.defaults import ALPHA
from bootscope.errors import InputError

app = typer.Typer(
    name="latency",
    help="Real-time latency: read cyclictest, oslat and rtla output; run them; compare tails.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)

OUTPUT_FORMATS = ("table", "json")
FilesArg = Annotated[list[str], typer.Argument(metavar="FILE...", help="Tool output files ('-' is stdin).")]
FormatOpt = Annotated[str, typer.Option("--format", help=f"Output format: {', '.join(OUTPUT_FORMATS)}.")]
AlphaOpt = Annotated[
    float | None,
    typer.Option("--alpha", help=f"Significance level: intervals at 1 - alpha [default: {ALPHA:g}]."),
]


@app.command("analyze")
def analyze(
    files: FilesArg,
    output_format: FormatOpt = "table",
    alpha: AlphaOpt = None,
    old_confidence: options.ConfidenceAlias = None,
) -> None:
    """Show per-thread cycles, min/avg/max and p50/p99/p99.9/p99.99 from latency tool output."""
    from bootscope.report.latency_out import latency_json, latency_table
    from bootscope.usecases.latency_files import analyze_latency_files

    if output_format not in OUTPUT_FORMATS:
        raise InputError(f"unknown --format {output_format!r}; use {' or '.join(OUTPUT_FORMATS)}")
    found = analyze_latency_files(files, 1 - options.alpha_level(alpha, old_confidence))
    if output_format == "json":
        print(latency_json(found.rows, found.warnings))
        return
    from bootscope.report.screen import stdout_width_cells

    print(latency_table(found.rows, stdout_width_cells(sys.stdout)))
    for warning in found.warnings:
        print(f"warning: {warning}", file=sys.stderr)


def _register() -> None:
    # The measuring commands live in their own module (one verb per file); registered here so that
    # `bootscope latency --help` lists them beside analyze.
    from bootscope.cli import latency_run_cmd

    app.command("run")(latency_run_cmd.run)
    app.command("show")(latency_run_cmd.show)


_register()

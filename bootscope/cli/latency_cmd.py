"""``bootscope latency analyze FILE...``: tail latency tables from cyclictest, oslat and rtla output."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

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
ConfidenceOpt = Annotated[float, typer.Option("--confidence", help="Confidence of the quantile intervals.")]


def read_text(path: str) -> str:
    """Return the whole text of ``path`` ('-' is stdin; .gz/.xz/.zst decompressed).
    Raises InputError for a missing, empty or unreadable file."""
    from bootscope.sources.files import read_text_lines

    source = read_text_lines(path)
    text = "\n".join(source)
    if not text.strip():
        raise InputError(f"{path}: empty")
    return text


@app.command("analyze")
def analyze(files: FilesArg, output_format: FormatOpt = "table", confidence: ConfidenceOpt = 0.95) -> None:
    """Show per-thread cycles, min/avg/max and p50/p99/p99.9/p99.99 from latency tool output."""
    from bootscope.analyze.latency import LatencyRow, summarize_run
    from bootscope.parse.latency import parse_latency_text
    from bootscope.report.latency_out import latency_json, latency_table

    if output_format not in OUTPUT_FORMATS:
        raise InputError(f"unknown --format {output_format!r}; use {' or '.join(OUTPUT_FORMATS)}")
    if not 0 < confidence < 1:
        raise InputError(f"--confidence must lie between 0 and 1, not {confidence}")
    rows: list[LatencyRow] = []
    warnings: list[str] = []
    for path in files:
        run = parse_latency_text(read_text(path), "stdin" if path == "-" else path)
        rows.extend(summarize_run(run, confidence))
        warnings.extend(run.warnings)
    if output_format == "json":
        print(latency_json(rows, warnings))
        return
    print(latency_table(rows))
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)


def _register() -> None:
    # The measuring commands live in their own module (one verb per file); registered here so that
    # `bootscope latency --help` lists them beside analyze.
    from bootscope.cli import latency_run_cmd

    app.command("run")(latency_run_cmd.run)
    app.command("show")(latency_run_cmd.show)


_register()

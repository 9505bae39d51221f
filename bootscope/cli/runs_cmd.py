"""``bootscope runs`` lists stored experiments; ``bootscope export ID`` writes one out (JSON or CSV)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from bootscope import defaults
from bootscope.cli import options

EXPORT_FORMATS = ("json", "csv", "kcidb")


def runs(
    db: options.Db = defaults.DEFAULT_DB,
    fmt: Annotated[str, options.format_option(options.TABLE_JSON, "table")] = "table",
) -> None:
    """List the experiments stored in a database."""
    from bootscope.report.runs_out import render_runs, runs_json
    from bootscope.usecases.runs import list_runs  # sqlalchemy: only when run

    as_json = options.check_format(fmt, options.TABLE_JSON) == "json"
    experiments = list_runs(db)
    if as_json:
        sys.stdout.write(runs_json(experiments))
        return
    from bootscope.report.console import output_console

    render_runs(experiments, db, output_console())


def export(
    experiment: Annotated[
        str | None,
        typer.Argument(
            metavar="ID|latest",
            help="Experiment id or 'latest' (--format kcidb without one: the fleet boots).",
        ),
    ] = None,
    fmt: Annotated[str, options.format_option(EXPORT_FORMATS, "json")] = "json",
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="File to write (default stdout).")
    ] = None,
    db: options.Db = defaults.DEFAULT_DB,
    origin: Annotated[str, typer.Option("--origin", help="KCIDB origin of --format kcidb.")] = "bootscope",
) -> None:
    """Write one stored experiment out, with every boot (and, in JSON, every boot's log): JSON with
    every log, or CSV with one row per boot; or as KCIDB v5 JSON (--format kcidb: boot phases as tests
    with numbers and units), with no ID every imported fleet boot."""
    from bootscope.report.runs_out import export_text
    from bootscope.usecases.runs import export_run

    options.check_format(fmt, EXPORT_FORMATS)
    text = export_text(export_run(db, experiment, fmt, origin))
    if output is None:
        sys.stdout.write(text)
        return
    from bootscope.report.atomic import write_text_atomically

    write_text_atomically(output, text)

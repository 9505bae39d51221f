"""``bootscope runs`` lists stored experiments; ``bootscope export ID`` writes one out (JSON or CSV)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from bootscope import defaults
from bootscope.cli import options
from bootscope.errors import InputError
from bootscope.report.console import output_console

EXPORT_FORMATS = ("json", "csv", "kcidb")


def runs(
    db: options.Db = defaults.DEFAULT_DB,
    fmt: Annotated[str, options.format_option(options.TABLE_JSON, "table")] = "table",
    as_json: options.JsonAlias = False,
) -> None:
    """List the experiments stored in a database."""
    from bootscope.store import Store  # sqlalchemy: only when run
    from bootscope.store.owner import shown_status

    as_json = options.output_format(fmt, as_json) == "json"
    if "://" not in db and not Path(db).exists():
        raise InputError(f"no database {db} (bootscope run creates it; or pass --db)")
    with Store.open(db) as store:
        experiments = store.list_experiments()
    if as_json:
        rows = [
            {
                "id": e.experiment.id,
                "created": e.experiment.created,
                "status": shown_status(e.experiment),
                "accel": e.experiment.accel,
                "seed": e.experiment.seed,
                "variants": [v.name for v in e.experiment.variants],
                "boots": e.boots,
                "ok": e.ok,
                "failed": e.failed,
            }
            for e in experiments
        ]
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return
    out = output_console()
    if not experiments:
        out.print(f"no experiments in {escape(db)}")
        return
    table = Table(title=f"experiments in {escape(db)}", title_justify="left")
    for heading in ("id", "created (UTC)", "status", "accel", "variants", "ok", "failed", "stored"):
        table.add_column(heading, justify="right" if heading in ("id", "ok", "failed", "stored") else "left")
    for e in experiments:
        table.add_row(
            str(e.experiment.id),
            e.experiment.created.replace("T", " ").removesuffix("+00:00"),
            escape(shown_status(e.experiment)),
            escape(e.experiment.accel),
            escape(", ".join(v.name for v in e.experiment.variants)),
            str(e.ok),
            str(e.failed),
            str(e.boots),
        )
    out.print(table)


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
    from bootscope.store import Store
    from bootscope.store.export import export_csv, export_document

    options.check_format(fmt, EXPORT_FORMATS)
    if "://" not in db and not Path(db).exists():
        raise InputError(f"no database {db} (pass --db)")
    if experiment is None and fmt != "kcidb":
        raise InputError("give an experiment ID (or latest); only --format kcidb exports without one")
    with Store.open(db) as store:
        if fmt == "kcidb":
            from bootscope.store.kcidb_export import export_kcidb

            text = json.dumps(export_kcidb(store, origin, experiment)) + "\n"
        elif fmt == "json":
            text = json.dumps(export_document(store, str(experiment))) + "\n"
        else:
            text = export_csv(store, str(experiment))
    if output is None:
        sys.stdout.write(text)
        return
    from bootscope.report.atomic import write_text_atomically

    write_text_atomically(output, text)

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
from bootscope.cli.console import output_console
from bootscope.errors import InputError

_FORMATS = ("json", "csv")


def runs(
    db: Annotated[str, typer.Option("--db", help="SQLite path or database URL.")] = defaults.DEFAULT_DB,
    as_json: Annotated[bool, typer.Option("--json", help="Print the list as JSON.")] = False,
) -> None:
    """List the experiments stored in a database."""
    from bootscope.store import Store  # sqlalchemy: only when run
    from bootscope.store.owner import shown_status

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
    experiment: Annotated[str, typer.Argument(metavar="ID|latest", help="Experiment id or 'latest'.")],
    fmt: Annotated[
        str, typer.Option("--format", help="json (with every log) or csv (one row per boot).")
    ] = "json",
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="File to write (default stdout).")
    ] = None,
    db: Annotated[str, typer.Option("--db", help="SQLite path or database URL.")] = defaults.DEFAULT_DB,
) -> None:
    """Write one stored experiment out, with every boot (and, in JSON, every boot's log)."""
    from bootscope.store import Store

    if fmt not in _FORMATS:
        raise InputError(f"--format must be json or csv, not {fmt!r}")
    if "://" not in db and not Path(db).exists():
        raise InputError(f"no database {db} (pass --db)")
    with Store.open(db) as store:
        text = (
            json.dumps(store.export_document(experiment)) + "\n"
            if fmt == "json"
            else store.export_csv(experiment)
        )
    if output is None:
        sys.stdout.write(text)
        return
    from bootscope.report.atomic import write_text_atomically

    write_text_atomically(output, text)

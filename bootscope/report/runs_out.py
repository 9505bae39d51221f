"""``bootscope runs`` and ``export`` rendered: the experiments as a table or JSON, an export as text."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bootscope.store.owner import shown_status
from bootscope.store.records import ExperimentSummary

if TYPE_CHECKING:
    from rich.console import Console

    from bootscope.usecases.runs import Export


def runs_json(experiments: Sequence[ExperimentSummary]) -> str:
    """Return the experiments as indented JSON text, one object each (id, created, status, accel,
    seed, variants, boots stored, final boots ok and failed), with a final newline."""
    rows: list[dict[str, Any]] = [
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
    return json.dumps(rows, indent=2) + "\n"


# Left out, in this order, when the terminal is too narrow: the boots stored (warm-ups included),
# the accelerator, then when the run was made.
_DROPPABLE = ("stored", "accel", "created (UTC)")


def render_runs(experiments: Sequence[ExperimentSummary], db: str, out: Console) -> None:
    """Print the experiments of the database ``db`` as a table fitted to ``out``'s width (or a line
    saying there are none)."""
    from rich.markup import escape
    from rich.table import Table

    from bootscope.report.rich_fit import drop_to_fit

    if not experiments:
        out.print(f"no experiments in {escape(db)}")
        return
    table = Table(title=f"experiments in {escape(db)}", title_justify="left")
    for heading in ("id", "created (UTC)", "status", "accel", "variants", "ok", "failed", "stored"):
        number = heading in ("id", "ok", "failed", "stored")
        table.add_column(heading, justify="right" if number else "left", no_wrap=number, overflow="fold")
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
    drop_to_fit(table, out.width, _DROPPABLE)
    out.print(table)


def export_text(export: Export) -> str:
    """Return an export as the text of its file: compact JSON with a final newline, or the CSV."""
    if export.document is not None:
        return json.dumps(export.document) + "\n"
    return export.csv_text or ""

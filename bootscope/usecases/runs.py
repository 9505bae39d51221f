"""``bootscope runs`` and ``bootscope export``: the experiments a store holds, and one of them written
out whole (JSON with every log, CSV with a row per boot, or KCIDB v5)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bootscope.errors import InputError
from bootscope.store.records import ExperimentSummary


@dataclass(frozen=True, slots=True)
class Export:
    """An export: the JSON-able document (``json``, ``kcidb``) or the CSV text (``csv``)."""

    fmt: str
    document: Mapping[str, Any] | None = None
    csv_text: str | None = None


def list_runs(db: str) -> list[ExperimentSummary]:
    """Return every experiment stored in ``db`` with its boot counts, oldest first. Raises
    InputError for a database file that does not exist, StoreError for one that cannot be read."""
    from bootscope.store import Store  # sqlalchemy: only when run

    if "://" not in db and not Path(db).exists():
        raise InputError(f"no database {db} (bootscope run creates it; or pass --db)")
    with Store.open(db) as store:
        return list(store.list_experiments())


def export_run(db: str, experiment: str | None, fmt: str, origin: str) -> Export:
    """Return experiment ``experiment`` (an id or ``latest``) of ``db`` as ``fmt`` (``json``,
    ``csv`` or ``kcidb``); ``kcidb`` without an experiment exports every imported fleet boot,
    under KCIDB origin ``origin``. Raises InputError for a missing database file or a missing
    experiment, StoreError for an unknown one."""
    from bootscope.store import Store
    from bootscope.store.export import export_csv, export_document

    if "://" not in db and not Path(db).exists():
        raise InputError(f"no database {db} (pass --db)")
    if experiment is None and fmt != "kcidb":
        raise InputError("give an experiment ID (or latest); only --format kcidb exports without one")
    with Store.open(db) as store:
        if fmt == "kcidb":
            from bootscope.store.kcidb_export import export_kcidb

            return Export(fmt, document=export_kcidb(store, origin, experiment))
        if fmt == "json":
            return Export(fmt, document=export_document(store, str(experiment)))
        return Export(fmt, csv_text=export_csv(store, str(experiment)))

"""The fleet boots as Parquet files, the form the fleet queries read (DuckDB over Parquet).

The store stays the one source of truth; the Parquet directory is a derived copy, brought up to
date before every query: only files imported since the last export are written (one new part),
and a copy that no longer matches the store (another database, boots removed) is rewritten whole.

Columns: ``file_id``, ``path``, ``format``, ``boot`` (number in its file), ``outcome``, ``reason``,
``kernel_release``; one ``m:KEY`` string column per metadata field and one ``v:METRIC`` double column
per metric (its registered unit). pyarrow is imported when an export runs (it is heavy, and only
the fleet commands need it).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bootscope import defaults
from bootscope.errors import StoreError
from bootscope.store.fleet import FleetRow, count_boots_after, fleet_state, iter_fleet_rows

if TYPE_CHECKING:
    from bootscope.store.db import Store

META_PREFIX = "m:"
METRIC_PREFIX = "v:"
FIXED_COLUMNS = ("file_id", "path", "format", "boot", "outcome", "reason", "kernel_release")
_MANIFEST = "manifest.json"


@dataclass(frozen=True, slots=True)
class ParquetSnapshot:
    """The Parquet copy of a store's fleet boots: its directory, part files and boot count."""

    directory: Path
    parts: tuple[Path, ...]
    boots: int


def default_parquet_dir(db: str) -> Path:
    """Return where the Parquet copy of database ``db`` lives: beside a SQLite file
    (``FILE.fleet-parquet``), in the user's cache directory for a database URL."""
    if "://" in db:
        digest = hashlib.sha256(db.encode()).hexdigest()[:16]
        return defaults.cache_dir() / "fleet-parquet" / digest
    return Path(db).expanduser().with_name(Path(db).name + ".fleet-parquet")


def _read_manifest(directory: Path) -> dict[str, Any] | None:
    try:
        manifest = json.loads((directory / _MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def refresh_parquet(store: Store, directory: Path) -> ParquetSnapshot:
    """Bring the Parquet copy of ``store``'s fleet boots in ``directory`` up to date and return it.
    Raises StoreError when the directory cannot be written or the database fails."""
    last_file, total = fleet_state(store)
    manifest = _read_manifest(directory)
    fresh = (
        manifest is not None
        and manifest.get("store") == store.name
        and int(manifest.get("last_file", -1)) <= last_file
        and all((directory / part).is_file() for part in manifest.get("parts", []))
    )
    try:
        if not fresh or manifest is None:
            _clear(directory)
            manifest = {"store": store.name, "last_file": 0, "boots": 0, "parts": []}
        after = int(manifest["last_file"])
        if after < last_file:
            if int(manifest["boots"]) + count_boots_after(store, after) != total:
                # boots of files already exported changed: start again
                _clear(directory)
                manifest = {"store": store.name, "last_file": 0, "boots": 0, "parts": []}
                after = 0
            directory.mkdir(parents=True, exist_ok=True)
            for number, rows in enumerate(iter_fleet_rows(store, after), start=len(manifest["parts"])):
                name = f"part-{number:06d}.parquet"
                _write_part(directory / name, rows)
                manifest["parts"].append(name)
                manifest["boots"] += len(rows)
            manifest["last_file"] = last_file
            tmp = directory / (_MANIFEST + ".tmp")
            tmp.write_text(json.dumps(manifest))
            os.replace(tmp, directory / _MANIFEST)
    except OSError as error:
        raise StoreError(f"cannot write the Parquet copy in {directory}: {error}") from error
    parts = tuple(directory / part for part in manifest["parts"])
    return ParquetSnapshot(directory, parts, int(manifest["boots"]))


def _clear(directory: Path) -> None:
    """Remove the copy's own files (never anything else: --parquet may name a user's directory)."""
    if not directory.is_dir():
        return
    for path in [*directory.glob("part-*.parquet"), *directory.glob("*.tmp"), directory / _MANIFEST]:
        path.unlink(missing_ok=True)


def _write_part(path: Path, rows: Sequence[FleetRow]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    meta_keys = sorted({key for row in rows for key in row.meta})
    metric_names = sorted({name for row in rows for name in row.metrics})
    columns: dict[str, Any] = {
        "file_id": pa.array([row.file_id for row in rows], pa.int64()),
        "path": pa.array([row.path for row in rows], pa.string()),
        "format": pa.array([row.format for row in rows], pa.string()),
        "boot": pa.array([row.number for row in rows], pa.int32()),
        "outcome": pa.array([row.outcome for row in rows], pa.string()),
        "reason": pa.array([row.reason for row in rows], pa.string()),
        "kernel_release": pa.array([row.kernel_release for row in rows], pa.string()),
    }
    for key in meta_keys:
        columns[META_PREFIX + key] = pa.array([row.meta.get(key) for row in rows], pa.string())
    for name in metric_names:
        columns[METRIC_PREFIX + name] = pa.array([row.metrics.get(name) for row in rows], pa.float64())
    tmp = path.with_suffix(".tmp")
    pq.write_table(pa.table(columns), tmp, compression="zstd")
    os.replace(tmp, path)

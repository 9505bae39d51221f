"""The fleet tables: boots imported from the logs of many hosts (``bootscope fleet import``).

One row per imported file (keyed by the sha256 of its bytes, so a file imported twice is stored once)
and one per boot found in it, with the host's metadata and the boot's metrics. Files are written in
batches, one transaction per batch: an import killed mid-way keeps every finished batch, and the
next import of the same files stores only what is missing.

Outcomes: ``ok``, ``failed``, ``incomplete`` (the log stops before the kernel ran init, without a
failure: cut short; ``usecases/fleet/logfile.py`` defines each) and ``not-run``. A store written
before ``incomplete`` existed holds such boots as ``failed`` with the reason ``OLD_NEVER_INIT``
(which lumped cut logs with hangs): they are read as ``incomplete``, since nothing in the log said
the boot failed (a panic had its own reason).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from bootscope.store import schema

if TYPE_CHECKING:
    from bootscope.store.db import Store

OUTCOME_OK = "ok"
OUTCOME_FAILED = "failed"
# The log stops before the kernel ran init and shows no failure: neither ok nor failed.
OUTCOME_INCOMPLETE = "incomplete"
# A boot that a device farm reports as not run (KCIDB MISS or SKIP): counted, neither ok nor failed.
OUTCOME_NOT_RUN = "not-run"
# The reason an older bootscope stored with every boot that had no "Run /init" line and no panic.
OLD_NEVER_INIT = "no 'Run /init' line: the kernel never ran init (panic, hang) or the log was cut short"
_HASH_QUERY_CHUNK = 500  # hashes per IN (...) query: well under SQLite's and PostgreSQL's limits


@dataclass(frozen=True, slots=True)
class FleetBoot:
    """One boot of an imported log: its position in the file (1-based), outcome (``ok``, ``failed``,
    ``incomplete``, ``not-run``) and why, the kernel release it printed, metadata it carries itself
    (merged over the file's), and its metrics (name -> value in the metric's unit; absent: not reached)."""

    number: int
    outcome: str
    reason: str = ""
    kernel_release: str | None = None
    meta: Mapping[str, str] = field(default_factory=dict)
    metrics: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FleetFile:
    """One imported log: the path it was read from, the sha256 of its bytes, the format found, the
    host metadata given for it (the ``--meta`` CSV row) and its boots."""

    path: str
    sha256: str
    format: str
    meta: Mapping[str, str]
    boots: tuple[FleetBoot, ...]


@dataclass(frozen=True, slots=True)
class FleetRow:
    """One stored boot as the exporters read it: file id and path, format, boot number, outcome,
    reason, kernel release, metadata (file's and boot's merged) and metrics."""

    file_id: int
    path: str
    format: str
    number: int
    outcome: str
    reason: str
    kernel_release: str | None
    meta: Mapping[str, str]
    metrics: Mapping[str, float]


def known_hashes(store: Store, hashes: Collection[str]) -> set[str]:
    """Return those of ``hashes`` (sha256 hex) already imported into ``store``; raises StoreError."""
    wanted = sorted(set(hashes))
    found: set[str] = set()
    table = schema.fleet_files
    with store.reading() as conn:
        for start in range(0, len(wanted), _HASH_QUERY_CHUNK):
            chunk = wanted[start : start + _HASH_QUERY_CHUNK]
            found.update(conn.execute(sa.select(table.c.sha256).where(table.c.sha256.in_(chunk))).scalars())
    return found


def record_files(store: Store, files: Sequence[FleetFile]) -> int:
    """Store ``files`` and their boots in one transaction, leaving out any whose sha256 is already
    stored (another import may have stored it meanwhile); return the number of boots stored.
    Raises StoreError on a database failure (then nothing of this batch is stored)."""
    if not files:
        return 0
    imported = datetime.now(UTC).isoformat(timespec="seconds")
    stored = 0
    with store.transaction("importing fleet logs into") as conn:
        table = schema.fleet_files
        present = set(
            conn.execute(
                sa.select(table.c.sha256).where(table.c.sha256.in_([f.sha256 for f in files]))
            ).scalars()
        )
        boot_rows: list[dict[str, Any]] = []
        for item in files:
            if item.sha256 in present:
                continue
            present.add(item.sha256)
            file_id = conn.execute(
                sa.insert(table)
                .values(
                    sha256=item.sha256,
                    path=item.path,
                    format=item.format,
                    imported=imported,
                    meta=dict(item.meta),
                )
                .returning(table.c.id)
            ).scalar_one()
            boot_rows.extend(
                {
                    "file": file_id,
                    "number": boot.number,
                    "outcome": boot.outcome,
                    "reason": boot.reason,
                    "kernel_release": boot.kernel_release,
                    "meta": dict(boot.meta),
                    "metrics": {name: float(value) for name, value in boot.metrics.items()},
                }
                for boot in item.boots
            )
        if boot_rows:
            conn.execute(sa.insert(schema.fleet_boots), boot_rows)
            stored = len(boot_rows)
    return stored


def fleet_state(store: Store) -> tuple[int, int]:
    """Return (the highest fleet file id, the number of fleet boots) stored; (0, 0) for none.
    Raises StoreError."""
    with store.reading() as conn:
        last = conn.execute(sa.select(sa.func.max(schema.fleet_files.c.id))).scalar()
        count = conn.execute(sa.select(sa.func.count()).select_from(schema.fleet_boots)).scalar()
    return int(last or 0), int(count or 0)


def count_boots_after(store: Store, file_id: int) -> int:
    """Return how many stored fleet boots belong to files with an id above ``file_id``."""
    boots = schema.fleet_boots
    with store.reading() as conn:
        count = conn.execute(sa.select(sa.func.count()).where(boots.c.file > file_id)).scalar()
    return int(count or 0)


def iter_fleet_rows(
    store: Store, after_file_id: int = 0, chunk_rows: int = 100_000
) -> Iterator[list[FleetRow]]:
    """Yield the stored fleet boots of files with an id above ``after_file_id``, in file and boot
    order, ``chunk_rows`` at a time (bounded memory for a million boots). Raises StoreError."""
    files, boots = schema.fleet_files, schema.fleet_boots
    file_meta: dict[int, tuple[str, str, Mapping[str, str]]] = {}
    last_id = 0
    with store.reading() as conn:
        for file_row in conn.execute(
            sa.select(files.c.id, files.c.path, files.c.format, files.c.meta).where(
                files.c.id > after_file_id
            )
        ):
            file_meta[file_row.id] = (file_row.path, file_row.format, file_row.meta or {})
        while True:
            rows = conn.execute(
                sa.select(
                    boots.c.id,
                    boots.c.file,
                    boots.c.number,
                    boots.c.outcome,
                    boots.c.reason,
                    boots.c.kernel_release,
                    boots.c.meta,
                    boots.c.metrics,
                )
                .where(boots.c.file > after_file_id, boots.c.id > last_id)
                .order_by(boots.c.id)
                .limit(chunk_rows)
            ).all()
            if not rows:
                return
            last_id = rows[-1].id
            out = []
            for row in rows:
                path, fmt, meta = file_meta.get(row.file, ("", "", {}))
                outcome = row.outcome
                if outcome == OUTCOME_FAILED and row.reason == OLD_NEVER_INIT:
                    outcome = OUTCOME_INCOMPLETE  # stored before incomplete existed: see above
                out.append(
                    FleetRow(
                        file_id=row.file,
                        path=path,
                        format=fmt,
                        number=row.number,
                        outcome=outcome,
                        reason=row.reason,
                        kernel_release=row.kernel_release,
                        meta={**meta, **(row.meta or {})},
                        metrics=row.metrics or {},
                    )
                )
            yield out

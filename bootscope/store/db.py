"""The store: open a database, write experiments and boots, read them back.

A plain path is a SQLite file in WAL mode (readers never block the writer, and a killed writer
loses at most the boot it was writing); ``sqlite:///...`` and ``postgresql+psycopg://...`` URLs are
used as given. Every boot is written in its own transaction the moment it ends.
Every database failure becomes a one-line :class:`~bootscope.errors.StoreError`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from bootscope.errors import StoreError, StoreLookupError
from bootscope.model import LogLine
from bootscope.store import schema
from bootscope.store.engine import describe_error, engine_for, is_sqlite_file
from bootscope.store.logcodec import decode_log, encode_log
from bootscope.store.owner import current_owner, owner_columns, owner_from_row
from bootscope.store.records import (
    STATUS_RUNNING,
    BootRecord,
    ExperimentRecord,
    ExperimentSummary,
    VariantRecord,
)
from bootscope.store.upgrade import ensure_schema

_INSERT_BOOT = sa.insert(schema.boots).returning(schema.boots.c.id)
_INSERT_SAMPLE = sa.insert(schema.samples)
_INSERT_LOG = sa.insert(schema.logs)


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Store:
    """A bootscope database. Use :meth:`open`; safe to share between threads (writes are serialized)."""

    def __init__(self, engine: Engine, shown: str) -> None:
        self._engine = engine
        self.name = shown
        self._write_lock = threading.Lock()
        # (experiment, variant name) -> variant id: variants never change once an experiment exists.
        self._variant_ids: dict[tuple[int, str], int] = {}

    @classmethod
    def open(cls, target: str | Path, *, create: bool = True) -> Store:
        """Return the store at a path (SQLite, WAL mode) or URL, creating the schema if the database is
        empty. Commands that only read pass ``create=False``: then a SQLite file that does not exist,
        or an empty SQLite database, raises StoreLookupError (exit 2, "no store at PATH") and nothing
        is created (server URLs behave as with ``create``). Raises StoreError for a bad URL, an
        unreachable server, a locked or unwritable file, or a database that is not bootscope's."""
        engine, shown = engine_for(target, create=create)
        store = cls(engine, shown)
        with store._guard("opening"):
            store._ensure_schema(create=create or not is_sqlite_file(engine.url))
        return store

    def close(self) -> None:
        """Release every connection (the store cannot be used afterwards)."""
        self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        try:
            yield
        except sa.exc.SQLAlchemyError as error:
            raise StoreError(f"{action} {self.name} failed: {describe_error(error)}") from error

    @contextmanager
    def _write(self, action: str) -> Iterator[Connection]:
        with self._write_lock, self._guard(action), self._engine.begin() as conn:
            yield conn

    @contextmanager
    def transaction(self, action: str) -> Iterator[Connection]:
        """Yield a connection in one write transaction (committed on exit, serialized with this
        store's other writes); a database failure becomes StoreError("``action`` NAME failed: ...")."""
        with self._write(action) as conn:
            yield conn

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        """Yield a connection for reading; a database failure becomes StoreError."""
        with self._guard("reading"), self._engine.connect() as conn:
            yield conn

    def _ensure_schema(self, *, create: bool = True) -> None:
        ensure_schema(self._engine, self.name, self._write, create=create)

    # ---- writing -------------------------------------------------------------------------------

    def create_experiment(
        self,
        *,
        plan: Mapping[str, Any],
        seed: int,
        accel: str,
        accel_reason: str,
        host: Mapping[str, Any],
        variants: Sequence[VariantRecord],
        meta: Mapping[str, str] | None = None,
    ) -> ExperimentRecord:
        """Store a new experiment (status ``running``) with its variants and ``meta`` labels (``--meta``)
        and return it, ids filled in;
        raises StoreError on a database failure or a duplicate variant name."""
        names = [variant.name for variant in variants]
        if len(set(names)) != len(names):
            raise StoreError(f"variant names must be unique, got {names}")
        created = _now_iso()
        with self._write("creating an experiment in") as conn:
            exp_id = conn.execute(
                sa.insert(schema.experiments)
                .values(
                    created=created,
                    plan=dict(plan),
                    seed=seed,
                    accel=accel,
                    accel_reason=accel_reason,
                    host=dict(host),
                    status=STATUS_RUNNING,
                    meta=dict(meta) if meta else None,
                    **owner_columns(),
                )
                .returning(schema.experiments.c.id)
            ).scalar_one()
            stored = []
            for variant in variants:
                variant_id = conn.execute(
                    sa.insert(schema.variants)
                    .values(experiment=exp_id, name=variant.name, config=dict(variant.config))
                    .returning(schema.variants.c.id)
                ).scalar_one()
                stored.append(VariantRecord(name=variant.name, config=dict(variant.config), id=variant_id))
        return ExperimentRecord(
            id=exp_id,
            created=created,
            plan=dict(plan),
            seed=seed,
            accel=accel,
            accel_reason=accel_reason,
            host=dict(host),
            status=STATUS_RUNNING,
            variants=tuple(stored),
            owner=current_owner(),
            meta=dict(meta or {}),
        )

    def set_status(self, exp_id: int, status: str) -> None:
        """Set an experiment's status (running, complete, interrupted); setting it running (a resume)
        makes this process its owner. Raises StoreError."""
        values: dict[str, Any] = {"status": status}
        if status == STATUS_RUNNING:
            values.update(owner_columns())
        with self._write("updating") as conn:
            conn.execute(
                sa.update(schema.experiments).where(schema.experiments.c.id == exp_id).values(**values)
            )

    def supersede(self, exp_id: int, boot_ids: Sequence[int]) -> None:
        """Mark stored boot attempts as replaced by a later attempt (a disturbed or interrupted
        measurement that is run again); their logs stay stored. Raises StoreError."""
        if not boot_ids:
            return
        boots = schema.boots
        with self._write("updating") as conn:
            conn.execute(
                sa.update(boots)
                .where(boots.c.experiment == exp_id, boots.c.id.in_(list(boot_ids)))
                .values(superseded=True)
            )

    def record_boot(self, exp_id: int, record: BootRecord, lines: Sequence[LogLine]) -> int:
        """Store one boot, its metric samples and its compressed log in one transaction; return its id.

        Raises StoreError if the variant is unknown, the position/attempt is already stored, or the
        database fails (locked, disk full)."""
        blob = encode_log(lines)
        with self._write("recording a boot in") as conn:
            variant_id = self._variant_ids.get((exp_id, record.variant))
            if variant_id is None:
                variant_id = conn.execute(
                    sa.select(schema.variants.c.id).where(
                        schema.variants.c.experiment == exp_id, schema.variants.c.name == record.variant
                    )
                ).scalar()
                if variant_id is None:
                    raise StoreError(f"experiment {exp_id} has no variant {record.variant!r}")
                self._variant_ids[(exp_id, record.variant)] = variant_id
            # Statements built once (module level) and given their values as parameters: building
            # them per boot was most of the runner's cost per measurement.
            boot_id = conn.execute(
                _INSERT_BOOT,
                {
                    "experiment": exp_id,
                    "variant": variant_id,
                    "index": record.index,
                    "attempt": record.attempt,
                    "warmup": record.warmup,
                    "outcome": record.outcome,
                    "reason": record.reason,
                    "accel": record.accel,
                    "qemu_command": list(record.command),
                    "kernel_release": record.kernel_release,
                    "host_start_ns": record.host_start_ns,
                    "disturbed": record.disturbed,
                    "superseded": record.superseded,
                    "other_cpu_s": record.other_cpu_s,
                    "steal_s": record.steal_s,
                    "started_at": record.started_at or _now_iso(),
                    "placement": dict(record.placement) or None,
                },
            ).scalar_one()
            rows = [
                {"boot": boot_id, "metric": metric, "value": float(value)}
                for metric, value in record.metrics.items()
                if value is not None
            ]
            if rows:
                conn.execute(_INSERT_SAMPLE, rows)
            conn.execute(_INSERT_LOG, {"boot": boot_id, "data": blob})
        return int(boot_id)

    # ---- reading -------------------------------------------------------------------------------

    def _experiment_from_row(self, conn: Connection, row: sa.Row[Any]) -> ExperimentRecord:
        variant_rows = conn.execute(
            sa.select(schema.variants)
            .where(schema.variants.c.experiment == row.id)
            .order_by(schema.variants.c.id)
        ).all()
        return ExperimentRecord(
            id=row.id,
            created=row.created,
            plan=row.plan,
            seed=row.seed,
            accel=row.accel,
            accel_reason=row.accel_reason,
            host=row.host,
            status=row.status,
            variants=tuple(VariantRecord(name=v.name, config=v.config, id=v.id) for v in variant_rows),
            owner=owner_from_row(row),
            meta=dict(row.meta or {}),
        )

    def experiment(self, exp_id: int | str) -> ExperimentRecord:
        """Return the experiment with this id, or the newest for ``"latest"``; raises StoreError if
        there is none."""
        table = schema.experiments
        query = sa.select(table)
        if isinstance(exp_id, str) and exp_id.strip().lower() == "latest":
            query = query.order_by(table.c.id.desc()).limit(1)
        else:
            try:
                query = query.where(table.c.id == int(exp_id))
            except ValueError:
                raise StoreLookupError(
                    f"experiment id must be a number or 'latest', got {exp_id!r}"
                ) from None
        with self._guard("reading"), self._engine.connect() as conn:
            row = conn.execute(query).first()
            if row is None:
                what = "no experiments yet" if exp_id == "latest" else f"no experiment {exp_id}"
                raise StoreLookupError(f"{self.name}: {what} (see `bootscope runs`)")
            return self._experiment_from_row(conn, row)

    def list_experiments(self, ids: Sequence[int] | None = None) -> list[ExperimentSummary]:
        """Return every experiment (those of ``ids`` only, when given: their boots alone are
        counted), oldest first, with its boot counts; raises StoreError."""
        boots = schema.boots
        final = sa.not_(boots.c.superseded)
        counts = sa.select(
            boots.c.experiment,
            sa.func.count().label("boots"),
            sa.func.sum(sa.case((sa.and_(final, boots.c.outcome == "ok"), 1), else_=0)).label("ok"),
            sa.func.sum(sa.case((sa.and_(final, boots.c.outcome != "ok"), 1), else_=0)).label("failed"),
        ).group_by(boots.c.experiment)
        query = sa.select(schema.experiments).order_by(schema.experiments.c.id)
        if ids is not None:
            counts = counts.where(boots.c.experiment.in_(list(ids)))
            query = query.where(schema.experiments.c.id.in_(list(ids)))
        with self._guard("reading"), self._engine.connect() as conn:
            rows = conn.execute(query).all()
            by_id = {r.experiment: r for r in conn.execute(counts).all()}
            summaries = []
            for row in rows:
                count = by_id.get(row.id)
                summaries.append(
                    ExperimentSummary(
                        experiment=self._experiment_from_row(conn, row),
                        boots=int(count.boots) if count else 0,
                        ok=int(count.ok or 0) if count else 0,
                        failed=int(count.failed or 0) if count else 0,
                    )
                )
            return summaries

    def boots(self, exp_id: int) -> list[BootRecord]:
        """Return every boot attempt of an experiment in order (index, then attempt), with metrics;
        raises StoreError."""
        boots, variants = schema.boots, schema.variants
        with self._guard("reading"), self._engine.connect() as conn:
            metric_rows = conn.execute(
                sa.select(schema.samples)
                .join(boots, boots.c.id == schema.samples.c.boot)
                .where(boots.c.experiment == exp_id)
            ).all()
            metrics: dict[int, dict[str, float | None]] = {}
            for m in metric_rows:
                metrics.setdefault(m.boot, {})[m.metric] = m.value
            rows = conn.execute(
                sa.select(boots, variants.c.name.label("variant_name"))
                .join(variants, variants.c.id == boots.c.variant)
                .where(boots.c.experiment == exp_id)
                .order_by(boots.c.index, boots.c.attempt)
            ).all()
        return [
            BootRecord(
                variant=row.variant_name,
                index=row._mapping["index"],
                warmup=bool(row.warmup),
                outcome=row.outcome,
                reason=row.reason,
                accel=row.accel,
                command=tuple(row.qemu_command),
                kernel_release=row.kernel_release,
                host_start_ns=row.host_start_ns,
                disturbed=bool(row.disturbed),
                other_cpu_s=row.other_cpu_s,
                steal_s=row.steal_s,
                started_at=row.started_at,
                attempt=row.attempt,
                superseded=bool(row.superseded),
                metrics=metrics.get(row.id, {}),
                id=row.id,
                placement=row.placement or {},
            )
            for row in rows
        ]

    def samples(self, exp_id: int, metric: str, include_warmup: bool = False) -> dict[str, list[float]]:
        """Return variant name -> values of ``metric`` (seconds) of the ok boots in run order.

        Every variant is a key (an empty list if no boot reached the metric). Superseded attempts are
        left out; the last attempt of a boot that stayed disturbed is kept (``boots`` tells which).
        Raises StoreError if the experiment does not exist."""
        record = self.experiment(exp_id)
        result: dict[str, list[float]] = {variant.name: [] for variant in record.variants}
        for boot in self.boots(exp_id):
            if not (boot.counts or (include_warmup and boot.final_ok)):
                continue
            value = boot.metrics.get(metric)
            if value is not None:
                result.setdefault(boot.variant, []).append(value)
        return result

    def boot_log(self, exp_id: int, index: int) -> list[LogLine]:
        """Return the stored lines of the boot at position ``index`` (its final attempt), each with its
        host arrival time in ns; raises StoreError if there is no such boot."""
        boots = schema.boots
        with self._guard("reading"), self._engine.connect() as conn:
            data = conn.execute(
                sa.select(schema.logs.c.data)
                .join(boots, boots.c.id == schema.logs.c.boot)
                .where(boots.c.experiment == exp_id, boots.c.index == index)
                .order_by(boots.c.superseded, boots.c.attempt.desc())
                .limit(1)
            ).scalar()
        if data is None:
            raise StoreLookupError(f"{self.name}: experiment {exp_id} has no boot {index}")
        return decode_log(bytes(data))

    def logs(self, exp_id: int) -> dict[int, list[LogLine]]:
        """Return boot id -> stored lines for every boot attempt of an experiment; raises StoreError."""
        boots = schema.boots
        with self._guard("reading"), self._engine.connect() as conn:
            rows = conn.execute(
                sa.select(schema.logs.c.boot, schema.logs.c.data)
                .join(boots, boots.c.id == schema.logs.c.boot)
                .where(boots.c.experiment == exp_id)
            ).all()
        return {row.boot: decode_log(bytes(row.data)) for row in rows}

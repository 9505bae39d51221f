"""The ids of stored runs, read without their boots: what a page of runs or the overview's latest
runs needs before it counts anything."""

from __future__ import annotations

import sqlalchemy as sa

from bootscope.store import schema
from bootscope.store.db import Store


def experiment_ids(store: Store, *, status: str | None = None, newest: int | None = None) -> list[int]:
    """Return the experiments' ids, oldest first: those stored with ``status`` only, when given,
    and only the ``newest`` ones, when given (no boot is read). Raises StoreError."""
    table = schema.experiments
    query = sa.select(table.c.id).order_by(table.c.id.desc())
    if status is not None:
        query = query.where(table.c.status == status)
    if newest is not None:
        query = query.limit(newest)
    with store.reading() as conn:
        return sorted(int(row[0]) for row in conn.execute(query))

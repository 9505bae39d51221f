"""Watched series kept in the store (``schema.watch_series``): one row per series, its points packed.

A point is one revision of one series: its name, revision time (Unix seconds; None: not known),
the order it was first stored in, and its boots' values in the metric's unit. Packed as little-endian
arrays after a 4-byte tag and the point count: times (float64, NaN: unknown), first-seen order
(int64), boots per point (int32), then every value (float64), point after point.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np
import sqlalchemy as sa

from bootscope.errors import StoreError
from bootscope.store import schema

if TYPE_CHECKING:
    from bootscope.store.db import Store

_TAG = b"BSW1"
_HEAD = struct.Struct("<4sI")
_WRITE_CHUNK = 500


@dataclass(frozen=True, slots=True)
class Point:
    """One revision of one series (see the module docstring)."""

    revision: str
    time_s: float | None
    first_seen: int
    values: tuple[float, ...]

    @property
    def median(self) -> float:
        """The point's value: the median of its boots."""
        return float(np.median(self.values))


@dataclass(frozen=True, slots=True)
class Series:
    """One fingerprint and one metric: its key (a short hash of both), the fingerprint's fields, the
    metric, its points in revision order, and the ids of the stored runs whose boots it holds."""

    key: str
    fingerprint: Mapping[str, str]
    metric: str
    points: tuple[Point, ...]
    runs: frozenset[int] = frozenset()


def pack_points(points: Sequence[Point]) -> bytes:
    """Return ``points`` packed (see the module docstring)."""
    times = np.array([np.nan if p.time_s is None else p.time_s for p in points], dtype="<f8")
    seen = np.array([p.first_seen for p in points], dtype="<i8")
    counts = np.array([len(p.values) for p in points], dtype="<i4")
    values = np.array([v for p in points for v in p.values], dtype="<f8")
    return (
        _HEAD.pack(_TAG, len(points)) + times.tobytes() + seen.tobytes() + counts.tobytes() + values.tobytes()
    )


def unpack_points(blob: bytes, revisions: Sequence[str]) -> tuple[Point, ...]:
    """Return the points packed in ``blob``, named by ``revisions``. Raises StoreError for a blob that
    is not a packing of that many points."""
    try:
        tag, size = _HEAD.unpack_from(blob)
        if tag != _TAG or size != len(revisions):
            raise ValueError("tag or size")
        at = _HEAD.size
        times = np.frombuffer(blob, "<f8", size, at)
        seen = np.frombuffer(blob, "<i8", size, at + 8 * size)
        counts = np.frombuffer(blob, "<i4", size, at + 16 * size)
        values = np.frombuffer(blob, "<f8", int(counts.sum()), at + 20 * size)
    except (ValueError, struct.error) as error:
        raise StoreError(
            f"a stored series is damaged ({error}); run `bootscope watch` to rebuild it"
        ) from None
    ends = np.cumsum(counts)
    starts = ends - counts
    return tuple(
        Point(
            revision=str(revisions[i]),
            time_s=None if np.isnan(times[i]) else float(times[i]),
            first_seen=int(seen[i]),
            values=tuple(values[starts[i] : ends[i]].tolist()),
        )
        for i in range(size)
    )


def _row(series: Series, at: str) -> dict[str, object]:
    return {
        "key": series.key,
        "metric": series.metric,
        "fingerprint": dict(series.fingerprint),
        "revisions": [p.revision for p in series.points],
        "points": pack_points(series.points),
        "runs": sorted(series.runs),
        "updated": at,
    }


def replace_all_series(store: Store, all_series: Sequence[Series]) -> None:
    """Make the stored series exactly ``all_series`` (a full rebuild), in one transaction."""
    at = datetime.now(UTC).isoformat(timespec="seconds")
    table = schema.watch_series
    with store.transaction("storing watched series in") as conn:
        conn.execute(sa.delete(table))
        for start in range(0, len(all_series), _WRITE_CHUNK):
            conn.execute(sa.insert(table), [_row(s, at) for s in all_series[start : start + _WRITE_CHUNK]])


def put_series(store: Store, changed: Sequence[Series]) -> None:
    """Store ``changed`` series (new ones added, known ones replaced), in one transaction."""
    at = datetime.now(UTC).isoformat(timespec="seconds")
    table = schema.watch_series
    with store.transaction("storing watched series in") as conn:
        keys = [s.key for s in changed]
        if keys:
            conn.execute(sa.delete(table).where(table.c.key.in_(keys)))
            conn.execute(sa.insert(table), [_row(s, at) for s in changed])


def load_series(store: Store, keys: Sequence[str] | None = None) -> Iterator[Series]:
    """Yield the stored series (those of ``keys`` only, when given), by key. Raises StoreError."""
    table = schema.watch_series
    query = sa.select(table).order_by(table.c.key)
    if keys is not None:
        query = query.where(table.c.key.in_(list(keys)))
    with store.reading() as conn:
        for row in conn.execute(query):
            points = unpack_points(row.points, row.revisions)
            yield Series(row.key, row.fingerprint or {}, row.metric, points, frozenset(row.runs or ()))

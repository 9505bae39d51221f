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
import numpy.typing as npt
import sqlalchemy as sa

from bootscope.errors import StoreError
from bootscope.store import schema

if TYPE_CHECKING:
    from bootscope.store.db import Store

TOTAL = "total"
_TAG = b"BSW1"
_HEAD = struct.Struct("<4sI")
_WRITE_CHUNK = 500
_READ_CHUNK = 200


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


FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def group_medians(values: FloatArray, counts: IntArray) -> FloatArray:
    """Return the median of each group of ``values`` (groups of ``counts`` values, one after another;
    every count at least 1)."""
    ids = np.repeat(np.arange(counts.size), counts)
    ordered = values[np.lexsort((values, ids))]
    starts = np.cumsum(counts) - counts
    result: FloatArray = (ordered[starts + (counts - 1) // 2] + ordered[starts + counts // 2]) / 2.0
    return result


@dataclass(frozen=True, slots=True, eq=False)
class Series:
    """One fingerprint and one metric: its key (a short hash of both), the fingerprint's fields, the
    metric (and ``component``: ``total``, or one component of the metric such as ``phase initcalls``),
    its points in revision order as arrays (names, times in Unix seconds (NaN: unknown),
    first-seen order, boots per point, every boot's value point after point (the metric's unit), each
    point's median), and the ids of the stored runs whose boots it holds. Build it with
    :func:`make_series`, which computes the medians."""

    key: str
    fingerprint: Mapping[str, str]
    metric: str
    revisions: tuple[str, ...]
    times_s: FloatArray
    first_seen: IntArray
    counts: IntArray
    values: FloatArray
    medians: FloatArray
    runs: frozenset[int] = frozenset()
    component: str = TOTAL

    @property
    def points(self) -> tuple[Point, ...]:
        """The points as objects (slow for long series: for merging and tests)."""
        ends = np.cumsum(self.counts)
        starts = ends - self.counts
        return tuple(
            Point(
                revision,
                None if np.isnan(self.times_s[i]) else float(self.times_s[i]),
                int(self.first_seen[i]),
                tuple(self.values[starts[i] : ends[i]].tolist()),
            )
            for i, revision in enumerate(self.revisions)
        )


def make_series(
    key: str,
    fingerprint: Mapping[str, str],
    metric: str,
    points: Sequence[Point],
    runs: frozenset[int] = frozenset(),
    component: str = TOTAL,
) -> Series:
    """Return the series of ``points`` (already in revision order, each with at least one value)."""
    arrays = (
        np.array([np.nan if p.time_s is None else p.time_s for p in points], dtype=np.float64),
        np.array([p.first_seen for p in points], dtype=np.int64),
        np.array([len(p.values) for p in points], dtype=np.int64),
        np.array([v for p in points for v in p.values], dtype=np.float64),
    )
    return series_from_arrays(
        key, fingerprint, metric, tuple(p.revision for p in points), arrays, runs, component
    )


def series_from_arrays(
    key: str,
    fingerprint: Mapping[str, str],
    metric: str,
    revisions: tuple[str, ...],
    arrays: tuple[FloatArray, IntArray, IntArray, FloatArray],
    runs: frozenset[int] = frozenset(),
    component: str = TOTAL,
) -> Series:
    """Return the series of points given as arrays: (times in Unix seconds, NaN unknown; first-seen
    order; boots per point, each at least 1; every value, point after point), in revision order."""
    times_s, first_seen, counts, values = arrays
    medians = group_medians(values, counts) if counts.size else np.zeros(0)
    return Series(
        key, fingerprint, metric, revisions, times_s, first_seen, counts, values, medians, runs, component
    )


def pack_series(series: Series) -> bytes:
    """Return the points of ``series`` packed (see the module docstring)."""
    head = _HEAD.pack(_TAG, len(series.revisions))
    arrays = (
        series.times_s.astype("<f8"),
        series.first_seen.astype("<i8"),
        series.counts.astype("<i4"),
        series.values.astype("<f8"),
    )
    return head + b"".join(a.tobytes() for a in arrays)


def unpack_arrays(blob: bytes, size: int) -> tuple[FloatArray, IntArray, IntArray, FloatArray]:
    """Return (times, first-seen order, boots per point, values) of ``size`` points packed in
    ``blob``. Raises StoreError for a blob that is not a packing of that many points."""
    try:
        tag, packed = _HEAD.unpack_from(blob)
        if tag != _TAG or packed != size:
            raise ValueError("tag or size")
        at = _HEAD.size
        times = np.frombuffer(blob, "<f8", size, at).astype(np.float64)
        seen = np.frombuffer(blob, "<i8", size, at + 8 * size).astype(np.int64)
        counts = np.frombuffer(blob, "<i4", size, at + 16 * size).astype(np.int64)
        if size and counts.min() < 1:
            raise ValueError("a point without boots")
        values = np.frombuffer(blob, "<f8", int(counts.sum()), at + 20 * size).astype(np.float64)
    except (ValueError, struct.error) as error:
        raise StoreError(f"a stored series is damaged ({error}); `bootscope watch` rebuilds it") from None
    return times, seen, counts, values


def _row(series: Series, at: str) -> dict[str, object]:
    return {
        "key": series.key,
        "metric": series.metric,
        "component": series.component,
        "fingerprint": dict(series.fingerprint),
        "revisions": list(series.revisions),
        "points": pack_series(series),
        "runs": sorted(series.runs),
        "updated": at,
    }


def replace_all_series(store: Store, all_series: Sequence[Series], components: bool = True) -> None:
    """Make the stored series exactly ``all_series`` (a full rebuild), in one transaction; without
    ``components`` only the totals are replaced (the stored component series are kept)."""
    at = datetime.now(UTC).isoformat(timespec="seconds")
    table = schema.watch_series
    with store.transaction("storing watched series in") as conn:
        conn.execute(sa.delete(table) if components else sa.delete(table).where(table.c.component == TOTAL))
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
        # Streamed (PostgreSQL would otherwise fetch every row before the first is judged).
        for row in conn.execution_options(yield_per=_READ_CHUNK).execute(query):
            revisions = tuple(str(r) for r in row.revisions)
            arrays = unpack_arrays(row.points, len(revisions))
            runs = frozenset(row.runs or ())
            fingerprint = row.fingerprint or {}
            yield series_from_arrays(row.key, fingerprint, row.metric, revisions, arrays, runs, row.component)


@dataclass(frozen=True, slots=True)
class SeriesName:
    """A stored series named without its points: key, metric, component and fingerprint."""

    key: str
    metric: str
    component: str
    fingerprint: Mapping[str, str]


def series_names(store: Store) -> list[SeriesName]:
    """Return every stored series without its points (cheap: no point is read), by metric, component
    and key. Raises StoreError."""
    table = schema.watch_series
    query = sa.select(table.c.key, table.c.metric, table.c.component, table.c.fingerprint).order_by(
        table.c.metric, table.c.component, table.c.key
    )
    with store.reading() as conn:
        return [
            SeriesName(row.key, row.metric, row.component, row.fingerprint or {})
            for row in conn.execute(query)
        ]


def run_labels(store: Store, runs: Sequence[int]) -> dict[int, tuple[Mapping[str, str], str | None]]:
    """Return, per stored run of ``runs`` that still exists, its ``--meta`` labels and the kernel
    release its boots name (one of them; None when none does), read in two queries. Raises
    StoreError."""
    experiments, boots = schema.experiments, schema.boots
    wanted = sorted(set(runs))
    found: dict[int, tuple[Mapping[str, str], str | None]] = {}
    with store.reading() as conn:
        for start in range(0, len(wanted), _WRITE_CHUNK):
            chunk = wanted[start : start + _WRITE_CHUNK]
            kernels = dict(
                conn.execute(
                    sa.select(boots.c.experiment, sa.func.max(boots.c.kernel_release))
                    .where(boots.c.experiment.in_(chunk))
                    .group_by(boots.c.experiment)
                ).all()
            )
            for row in conn.execute(
                sa.select(experiments.c.id, experiments.c.meta).where(experiments.c.id.in_(chunk))
            ):
                found[int(row.id)] = (row.meta or {}, kernels.get(row.id))
    return found

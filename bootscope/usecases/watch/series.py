"""Series of points, one per (fingerprint, revision), built from the stored runs and fleet imports.

A **fingerprint** is what a boot time depends on besides the revision: for a stored run the machine
(host name, CPU model, usable cores), QEMU's version, the accelerator, the workload, the variant's
options other than its kernel (command line, CPUs, memory, image, ...), bootscope's version and
every ``--meta`` label but the revision's; for a fleet import the file's metadata columns and what
the log says of the machine (architecture, CPUs, memory). A series is one fingerprint and one
metric; it never mixes fingerprints.

A **point** is every counted boot of one revision in one series (runs of the same revision add up);
its value is their median. Points are ordered by revision time (``revision_time``, else the run's
start), then by the order they were first stored.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any

from bootscope.store import ExperimentRecord, Store
from bootscope.store.fleet import OUTCOME_OK, iter_fleet_rows
from bootscope.store.watch import RunBootValue, iter_run_values
from bootscope.store.watch_series import TOTAL, Point, Series, make_series
from bootscope.usecases.watch.labels import REVISION, REVISION_TIME, fingerprint_labels, revision_epoch_s

# The variant options that are the revision, not the fingerprint.
_NOT_FINGERPRINT = ("kernel", "name")
_FLEET_NOT_FINGERPRINT = (REVISION, REVISION_TIME, "file")
UNKNOWN_REVISION = "(unknown)"


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def fingerprint_of(
    host: Mapping[str, Any], accel: str, workload: str, config: Mapping[str, Any], meta: Mapping[str, str]
) -> dict[str, str]:
    """Return the fingerprint of a stored run's variant (see the module docstring): field -> text,
    from the run's ``host`` document, accelerator, workload, the variant's options and the run's labels."""
    fields = {
        "source": "run",
        "machine": _text(host.get("hostname")),
        "cpu_model": _text(host.get("cpu_model")),
        "cores": _text(host.get("cores")),
        "qemu": _text(host.get("qemu_version")),
        "accel": accel,
        "workload": workload,
        "bootscope": _text(host.get("bootscope_version")),
    }
    for key in sorted(config):
        if key not in _NOT_FINGERPRINT:
            fields[f"option.{key}"] = _text(config[key])
    for key, label in sorted(fingerprint_labels(meta).items()):
        fields[f"meta.{key}"] = label
    return fields


def run_fingerprint(value: RunBootValue) -> dict[str, str]:
    """Return the fingerprint of a stored run's boot (:func:`fingerprint_of`)."""
    return fingerprint_of(value.host, value.accel, value.workload, value.config, value.meta)


def variant_in_series(record: ExperimentRecord, key: str, metric: str, component: str = TOTAL) -> str | None:
    """Return the name of the variant of stored run ``record`` whose boots belong to series ``key``
    (of ``metric`` and ``component``), None when none does. Reads nothing but the record."""
    workload = str(record.plan.get("workload", "boot"))
    for variant in record.variants:
        fingerprint = fingerprint_of(record.host, record.accel, workload, variant.config, record.meta)
        if series_key(fingerprint, metric, component) == key:
            return variant.name
    return None


def fleet_fingerprint(meta: Mapping[str, str]) -> dict[str, str]:
    """Return the fingerprint of a fleet boot from its metadata (the file's and the log's)."""
    fields = {"source": "fleet"}
    for key in sorted(meta):
        if key not in _FLEET_NOT_FINGERPRINT:
            fields[f"meta.{key}"] = _text(meta[key])
    return fields


def series_key(fingerprint: Mapping[str, str], metric: str, component: str = TOTAL) -> str:
    """Return a short stable key of a series: 12 hex digits of the SHA-256 of its fields, metric and
    component (a total's key leaves the component out)."""
    named: list[object] = [sorted(fingerprint.items()), metric]
    if component != TOTAL:
        named.append(component)
    text = json.dumps(named, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def differing_fields(a: Mapping[str, str], b: Mapping[str, str]) -> list[str]:
    """Return the fingerprint fields whose values differ between ``a`` and ``b`` (absent counts as a
    value), sorted."""
    return sorted(key for key in set(a) | set(b) if a.get(key) != b.get(key))


class SeriesBuilder:
    """Collects values into (series, revision) points."""

    def __init__(self) -> None:
        self._fingerprints: dict[str, tuple[Mapping[str, str], str, str]] = {}
        self._values: dict[str, dict[str, list[float]]] = {}
        self._times: dict[tuple[str, str], float | None] = {}
        self._seen: dict[tuple[str, str], int] = {}
        self._fingerprint_keys: dict[str, str] = {}
        self._runs: dict[str, set[int]] = {}

    def add(
        self,
        fingerprint: Mapping[str, str],
        metric: str,
        revision: str,
        time_s: float | None,
        value: float,
        run: int | None = None,
        component: str = TOTAL,
    ) -> None:
        """Add one boot's value to the point (series of ``fingerprint``, ``metric`` and
        ``component``, ``revision``)."""
        frozen = json.dumps([sorted(fingerprint.items()), metric, component])
        key = self._fingerprint_keys.get(frozen)
        if key is None:
            key = series_key(fingerprint, metric, component)
            self._fingerprint_keys[frozen] = key
            self._fingerprints[key] = (dict(fingerprint), metric, component)
        self._values.setdefault(key, {}).setdefault(revision, []).append(value)
        if run is not None:
            self._runs.setdefault(key, set()).add(run)
        slot = (key, revision)
        if slot not in self._seen:
            self._seen[slot] = len(self._seen)
            self._times[slot] = time_s
        elif time_s is not None:
            known = self._times[slot]
            self._times[slot] = time_s if known is None else min(known, time_s)

    def series(self) -> list[Series]:
        """Return the series built, each with its points in revision order."""
        result = []
        for key, by_revision in self._values.items():
            fingerprint, metric, component = self._fingerprints[key]
            points = [
                Point(revision, self._times[(key, revision)], self._seen[(key, revision)], tuple(values))
                for revision, values in by_revision.items()
            ]
            points.sort(key=lambda p: (p.time_s is None, p.time_s or 0.0, p.first_seen))
            runs = frozenset(self._runs.get(key, ()))
            result.append(make_series(key, fingerprint, metric, points, runs, component))
        result.sort(key=lambda s: (s.metric, s.component, sorted(s.fingerprint.items())))
        return result


def _created_s(created: str) -> float | None:
    try:
        return datetime.fromisoformat(created).timestamp()
    except ValueError:
        return None


def add_run_values(builder: SeriesBuilder, values: Iterable[RunBootValue]) -> None:
    """Add stored runs' boot values to ``builder``."""
    fingerprints: dict[tuple[int, str], dict[str, str]] = {}
    for value in values:
        cache_key = (value.experiment, _text(value.config))
        fingerprint = fingerprints.get(cache_key)
        if fingerprint is None:
            fingerprint = fingerprints[cache_key] = run_fingerprint(value)
        revision = value.meta.get(REVISION) or value.kernel_release or UNKNOWN_REVISION
        time_s = revision_epoch_s(value.meta.get(REVISION_TIME))
        builder.add(
            fingerprint,
            value.metric,
            revision,
            time_s if time_s is not None else _created_s(value.created),
            value.value,
            value.experiment,
        )


# The component kinds kept as series (`watch --by`), each with the metric it is part of: the
# kernel's phases, initcalls, CPUs and silences make up kernel_init_s, systemd's units userspace_s,
# the boot loader's stages bootloader_handoff_s.
COMPONENT_KINDS = ("phase", "initcall", "cpu", "gap", "unit", "bootloader")
# A component series is kept only where one of its points (a revision's median) reached this: a
# boot logs hundreds of initcalls and every line's silence, most of them microseconds long.
COMPONENT_FLOOR_S = 0.001


def component_metric(kind: str) -> str:
    """Return the metric a component of ``kind`` is part of (see COMPONENT_KINDS)."""
    from bootscope.metrics import BOOTLOADER_HANDOFF_S, KERNEL_INIT_S, USERSPACE_S

    return {"unit": USERSPACE_S, "bootloader": BOOTLOADER_HANDOFF_S}.get(kind, KERNEL_INIT_S)


def reaches_floor(series: Series) -> bool:
    """Whether a series is worth keeping: a total always, a component when the median of one of
    its points reached COMPONENT_FLOOR_S."""
    return series.component == TOTAL or bool(
        series.medians.size and series.medians.max() >= COMPONENT_FLOOR_S
    )


def add_run_components(
    builder: SeriesBuilder, store: Store, runs: Iterable[int], kinds: Sequence[str]
) -> None:
    """Add, for every counted boot of the boot ``runs``, each component of ``kinds`` (read again
    from the stored log) as a point of its component series, under the metric it is part of
    (:func:`component_metric`)."""
    from bootscope.usecases.diff import parts_from_run  # the analysis stack: only with --by

    by_metric: dict[str, list[str]] = {}
    for kind in kinds:
        by_metric.setdefault(component_metric(kind), []).append(kind)
    for run in runs:
        record = store.experiment(run)
        workload = str(record.plan.get("workload", "boot"))
        if workload != "boot":
            continue
        configs = {variant.name: variant.config for variant in record.variants}
        time_s = revision_epoch_s(record.meta.get(REVISION_TIME))
        time_s = time_s if time_s is not None else _created_s(record.created)
        for metric, metric_kinds in by_metric.items():
            _, by_variant = parts_from_run(store, run, metric, metric_kinds)
            for name, boots in by_variant.items():
                fingerprint = fingerprint_of(
                    record.host, record.accel, workload, configs.get(name, {}), record.meta
                )
                for boot in boots:
                    revision = record.meta.get(REVISION) or boot.kernel or UNKNOWN_REVISION
                    for (kind, component), seconds in boot.components.items():
                        builder.add(
                            fingerprint, metric, revision, time_s, seconds, run, f"{kind} {component}"
                        )


def collect_series(
    store: Store, metrics: Sequence[str] | None = None, fleet: bool = True, by: Sequence[str] = ()
) -> list[Series]:
    """Return every series of the store's runs (and, with ``fleet``, of its fleet imports), each of
    the ``metrics`` (all stored, when None), with ``by`` (kinds of COMPONENT_KINDS) one series per
    component as well where it reaches COMPONENT_FLOOR_S, sorted by metric, component, fingerprint.
    Raises StoreError."""
    builder = SeriesBuilder()
    wanted = set(metrics) if metrics is not None else None
    runs: set[int] = set()

    def noted(values: Iterable[RunBootValue]) -> Iterator[RunBootValue]:
        for stored in values:
            runs.add(stored.experiment)
            if wanted is None or stored.metric in wanted:
                yield stored

    add_run_values(builder, noted(iter_run_values(store)))
    if by:
        add_run_components(builder, store, sorted(runs), by)
    if fleet:
        for chunk in iter_fleet_rows(store):
            for row in chunk:
                if row.outcome != OUTCOME_OK:
                    continue
                fingerprint = fleet_fingerprint(row.meta)
                revision = row.meta.get(REVISION) or row.kernel_release or UNKNOWN_REVISION
                time_s = revision_epoch_s(row.meta.get(REVISION_TIME))
                for metric, value in row.metrics.items():
                    if (wanted is None or metric in wanted) and value is not None:
                        builder.add(fingerprint, metric, revision, time_s, float(value))
    return [series for series in builder.series() if reaches_floor(series)]


def run_series(store: Store, run: int, by: Sequence[str] = ()) -> list[Series]:
    """Return the series of one stored run (with ``by``, its component series too): its points only
    (one per series it touches)."""
    builder = SeriesBuilder()
    add_run_values(builder, iter_run_values(store, [run]))
    if by:
        add_run_components(builder, store, [run], by)
    return builder.series()


def merge_series(known: Series | None, new: Series) -> Series:
    """Return ``known`` with ``new``'s points added (a revision in both: its boots pooled; a point's
    first-seen order continues after ``known``'s), or ``new`` when nothing is known; a run already
    merged into ``known`` is not added again."""
    if known is None:
        return new
    if new.runs and new.runs <= known.runs:
        return known
    points = {p.revision: p for p in known.points}
    next_seen = max((p.first_seen for p in known.points), default=-1) + 1
    for offset, point in enumerate(new.points):
        old = points.get(point.revision)
        if old is None:
            points[point.revision] = Point(point.revision, point.time_s, next_seen + offset, point.values)
        else:
            time_s = old.time_s if point.time_s is None else min(point.time_s, old.time_s or point.time_s)
            points[point.revision] = Point(old.revision, time_s, old.first_seen, old.values + point.values)
    ordered = sorted(points.values(), key=lambda p: (p.time_s is None, p.time_s or 0.0, p.first_seen))
    return make_series(
        known.key, known.fingerprint, known.metric, ordered, known.runs | new.runs, known.component
    )

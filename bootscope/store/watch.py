"""The watch tables (schema 4): the boots a watched series is built from, and its alerts.

Reading: every counted boot of every stored run (the final attempt, ended ok, not a warm-up) with
the labels of its run, the host, the accelerator and its variant's options, one metric value per
row. Writing: alerts with the series steps they group, and each alert's triage history (who, when,
which state, a note); an alert's state is its last event's.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from bootscope.errors import StoreLookupError
from bootscope.model import Outcome
from bootscope.store import schema

if TYPE_CHECKING:
    from bootscope.store.db import Store

STATE_UNTRIAGED = "untriaged"
STATES = ("untriaged", "acknowledged", "invalid", "confirmed", "fixed", "wontfix")


@dataclass(frozen=True, slots=True)
class RunBootValue:
    """One metric value of one counted boot of a stored run, with what its series is keyed by: the
    run (id, created, ``--meta`` labels, host, accelerator), the variant's options and the kernel
    release the boot printed."""

    experiment: int
    created: str
    meta: Mapping[str, str]
    host: Mapping[str, Any]
    accel: str
    workload: str
    config: Mapping[str, Any]
    kernel_release: str | None
    boot: int
    metric: str
    value: float


def iter_run_values(store: Store, experiments: Sequence[int] | None = None) -> Iterator[RunBootValue]:
    """Yield every metric value of every counted boot of the stored runs (of ``experiments`` only,
    when given), in run and boot order. Raises StoreError."""
    e, v, b, s = schema.experiments, schema.variants, schema.boots, schema.samples
    query = (
        sa.select(
            e.c.id,
            e.c.created,
            e.c.meta,
            e.c.host,
            e.c.accel,
            e.c.plan,
            v.c.config,
            b.c.kernel_release,
            b.c.id.label("boot"),
            s.c.metric,
            s.c.value,
        )
        .select_from(
            s.join(b, b.c.id == s.c.boot).join(v, v.c.id == b.c.variant).join(e, e.c.id == b.c.experiment)
        )
        .where(sa.not_(b.c.warmup), sa.not_(b.c.superseded), b.c.outcome == str(Outcome.OK))
        .order_by(e.c.id, b.c.id)
    )
    if experiments is not None:
        query = query.where(e.c.id.in_(list(experiments)))
    plans: dict[int, str] = {}
    with store.reading() as conn:
        for row in conn.execute(query):
            if row.id not in plans:
                plans[row.id] = str((row.plan or {}).get("workload", "boot"))
            yield RunBootValue(
                experiment=row.id,
                created=row.created,
                meta=row.meta or {},
                host=row.host or {},
                accel=row.accel,
                workload=plans[row.id],
                config=row.config or {},
                kernel_release=row.kernel_release,
                boot=row.boot,
                metric=row.metric,
                value=float(row.value),
            )


@dataclass(frozen=True, slots=True)
class AlertItem:
    """One series step of an alert (see ``schema.watch_items``): the series key and fingerprint, the
    metric and component, the revisions around the step, the shift (metric's unit) and interval, p,
    jitter and |shift| in jitters; ``detail`` anything more (the point counts, a mode's share)."""

    series: str
    fingerprint: Mapping[str, str]
    metric: str
    component: str
    revision: str
    first_revision: str
    last_revision: str
    good_revision: str | None
    shift: float | None = None
    ci: tuple[float, float] | None = None
    p: float | None = None
    jitter: float | None = None
    jitter_ratio: float | None = None
    before: float | None = None
    detail: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AlertEvent:
    """One triage step: when (ISO 8601, UTC), by whom, the state it set and the note."""

    at: str
    by: str
    state: str
    note: str


@dataclass(frozen=True, slots=True)
class Alert:
    """An alert: a revision range (first..last may hold the change; good: the last before it) and
    every series step there of one kind (regression, improvement, missing), its state and history."""

    id: int
    created: str
    updated: str
    kind: str
    state: str
    first_revision: str
    last_revision: str
    good_revision: str | None
    rule: Mapping[str, Any]
    items: tuple[AlertItem, ...]
    events: tuple[AlertEvent, ...] = ()


@dataclass(frozen=True, slots=True)
class NewAlert:
    """An alert to store: its kind, range, the rule that found it, and its items."""

    kind: str
    first_revision: str
    last_revision: str
    good_revision: str | None
    rule: Mapping[str, Any]
    items: tuple[AlertItem, ...]


def now_iso() -> str:
    """Return the time now in UTC, ISO 8601 to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def _item_values(alert_id: int, item: AlertItem) -> dict[str, Any]:
    low, high = item.ci if item.ci is not None else (None, None)
    return {
        "alert": alert_id, "series": item.series, "fingerprint": dict(item.fingerprint),
        "metric": item.metric, "component": item.component, "revision": item.revision,
        "first_revision": item.first_revision, "last_revision": item.last_revision,
        "good_revision": item.good_revision, "shift": item.shift, "ci_low": low, "ci_high": high,
        "p": item.p, "jitter": item.jitter, "jitter_ratio": item.jitter_ratio, "before": item.before,
        "detail": dict(item.detail),
    }  # fmt: skip


def save_alerts(store: Store, new: Sequence[NewAlert], replace: Mapping[int, NewAlert], by: str) -> list[int]:
    """Store ``new`` alerts (state untriaged, one event each) and give the alerts of ``replace`` (id ->
    the recomputed alert) their new range and items, keeping their state; in one transaction.
    Returns the ids of the new alerts, in order. Raises StoreError."""
    at = now_iso()
    ids: list[int] = []
    alerts, items = schema.watch_alerts, schema.watch_items
    with store.transaction("storing alerts in") as conn:
        for alert in new:
            alert_id = conn.execute(
                sa.insert(alerts)
                .values(
                    created=at,
                    updated=at,
                    kind=alert.kind,
                    state=STATE_UNTRIAGED,
                    first_revision=alert.first_revision,
                    last_revision=alert.last_revision,
                    good_revision=alert.good_revision,
                    rule=dict(alert.rule),
                )
                .returning(alerts.c.id)
            ).scalar_one()
            ids.append(alert_id)
            if alert.items:
                conn.execute(sa.insert(items), [_item_values(alert_id, item) for item in alert.items])
            conn.execute(
                sa.insert(schema.watch_events).values(
                    alert=alert_id, at=at, by=by, state=STATE_UNTRIAGED, note="found"
                )
            )
        for alert_id, alert in replace.items():
            conn.execute(
                sa.update(alerts)
                .where(alerts.c.id == alert_id)
                .values(
                    updated=at,
                    first_revision=alert.first_revision,
                    last_revision=alert.last_revision,
                    good_revision=alert.good_revision,
                    rule=dict(alert.rule),
                )
            )
            conn.execute(sa.delete(items).where(items.c.alert == alert_id))
            if alert.items:
                conn.execute(sa.insert(items), [_item_values(alert_id, item) for item in alert.items])
    return ids


def add_event(store: Store, alert_id: int, state: str, by: str, note: str) -> None:
    """Record a triage step of alert ``alert_id`` and make ``state`` its state. Raises
    StoreLookupError for an unknown alert, StoreError on a database failure."""
    alerts = schema.watch_alerts
    at = now_iso()
    with store.transaction("triaging an alert in") as conn:
        done = conn.execute(sa.update(alerts).where(alerts.c.id == alert_id).values(state=state, updated=at))
        if done.rowcount == 0:
            raise StoreLookupError(f"{store.name}: no alert {alert_id} (see `bootscope alerts`)")
        conn.execute(
            sa.insert(schema.watch_events).values(alert=alert_id, at=at, by=by, state=state, note=note)
        )


def _item_from_row(row: sa.Row[Any]) -> AlertItem:
    ci = (row.ci_low, row.ci_high) if row.ci_low is not None and row.ci_high is not None else None
    return AlertItem(
        series=row.series,
        fingerprint=row.fingerprint or {},
        metric=row.metric,
        component=row.component,
        revision=row.revision,
        first_revision=row.first_revision,
        last_revision=row.last_revision,
        good_revision=row.good_revision,
        shift=row.shift,
        ci=ci,
        p=row.p,
        jitter=row.jitter,
        jitter_ratio=row.jitter_ratio,
        before=row.before,
        detail=row.detail or {},
    )


def load_alerts(store: Store, ids: Sequence[int] | None = None) -> list[Alert]:
    """Return the stored alerts (those of ``ids`` only, when given), oldest first, with their items
    and triage history. Raises StoreError."""
    alerts, items, events = schema.watch_alerts, schema.watch_items, schema.watch_events
    query = sa.select(alerts).order_by(alerts.c.id)
    if ids is not None:
        query = query.where(alerts.c.id.in_(list(ids)))
    with store.reading() as conn:
        rows = conn.execute(query).all()
        wanted = [row.id for row in rows]
        by_alert: dict[int, list[AlertItem]] = {}
        history: dict[int, list[AlertEvent]] = {}
        if wanted:
            for row in conn.execute(sa.select(items).where(items.c.alert.in_(wanted)).order_by(items.c.id)):
                by_alert.setdefault(row.alert, []).append(_item_from_row(row))
            for row in conn.execute(
                sa.select(events).where(events.c.alert.in_(wanted)).order_by(events.c.id)
            ):
                history.setdefault(row.alert, []).append(AlertEvent(row.at, row.by, row.state, row.note))
    return [
        Alert(
            id=row.id,
            created=row.created,
            updated=row.updated,
            kind=row.kind,
            state=row.state,
            first_revision=row.first_revision,
            last_revision=row.last_revision,
            good_revision=row.good_revision,
            rule=row.rule or {},
            items=tuple(by_alert.get(row.id, ())),
            events=tuple(history.get(row.id, ())),
        )
        for row in rows
    ]

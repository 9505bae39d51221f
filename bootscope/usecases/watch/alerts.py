"""``bootscope watch``, ``alerts`` and ``alert``: judge every series of a store, keep its alerts, triage.

Recomputing is idempotent: a step found again (same series and kind, overlapping revision range)
updates the alert that holds it, keeping its state and history; a new step opens a new alert
(state ``untriaged``); an alert whose step is no longer found stays as it was (its history is the
record). A confirmed alert restarts the baseline of every series it names (``detect.py``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bootscope.errors import InputError
from bootscope.stats.series_watch import WatchRule
from bootscope.store import Store
from bootscope.store.watch import STATES, Alert, AlertItem, NewAlert, add_event, load_alerts, save_alerts
from bootscope.store.watch_series import (
    TOTAL,
    Series,
    load_series,
    put_series,
    replace_all_series,
    series_names,
)
from bootscope.usecases.watch.detect import (
    KIND_MISSING,
    RevisionOrder,
    SeriesReport,
    alert_range,
    family_sizes,
    family_steps,
    group_items,
    judge_series,
    kind_of,
    missing_item,
)
from bootscope.usecases.watch.series import (
    COMPONENT_KINDS,
    collect_series,
    merge_series,
    reaches_floor,
    run_series,
)

STATE_CONFIRMED = "confirmed"
DEFAULT_BY = "bootscope"


@dataclass(frozen=True, slots=True)
class WatchUpdate:
    """What one recomputation found: the series judged (and how many lacked history), the ids of
    alerts opened and of alerts updated, and every alert now stored."""

    series: tuple[SeriesReport, ...]
    opened: tuple[int, ...]
    updated: tuple[int, ...]
    alerts: tuple[Alert, ...]
    rule: WatchRule

    @property
    def short_of_history(self) -> int:
        """How many series had too few points to judge any step."""
        return sum(1 for report in self.series if not report.enough_history)


def _confirmed(stored: Sequence[Alert]) -> dict[str, list[str]]:
    """series key -> first revisions after its confirmed steps."""
    cuts: dict[str, list[str]] = {}
    for alert in stored:
        if alert.state == STATE_CONFIRMED:
            for item in alert.items:
                cuts.setdefault(item.series, []).append(item.revision)
    return cuts


StoredSteps = dict[tuple[str, str, str], list[tuple[int, AlertItem]]]


def _index(stored: Sequence[Alert]) -> StoredSteps:
    """(kind, series, component) -> [(alert id, item)] of the stored alerts, oldest alert first."""
    steps: StoredSteps = {}
    for alert in stored:
        for item in alert.items:
            steps.setdefault((alert.kind, item.series, item.component), []).append((alert.id, item))
    return steps


def _match(new: NewAlert, steps: StoredSteps, order: dict[str, float]) -> int | None:
    """Return the id of the oldest stored alert holding one of ``new``'s steps (same series, kind,
    overlapping revision range; for missing data: the same series and last revision), else None."""
    found: list[int] = []
    for item in new.items:
        for alert_id, old in steps.get((new.kind, item.series, item.component), ()):
            if new.kind == KIND_MISSING:
                if old.revision == item.revision:
                    found.append(alert_id)
                continue
            low, high = order.get(old.first_revision), order.get(old.last_revision)
            if low is None or high is None:
                continue
            if order[item.first_revision] <= high and low <= order[item.last_revision]:
                found.append(alert_id)
    return min(found) if found else None


def _same(a: Alert, b: NewAlert) -> bool:
    def key(items: Sequence[AlertItem]) -> list[tuple[object, ...]]:
        return sorted((i.series, i.revision, i.first_revision, i.last_revision, i.shift, i.p) for i in items)

    return (a.first_revision, a.last_revision, a.good_revision) == (
        b.first_revision,
        b.last_revision,
        b.good_revision,
    ) and key(a.items) == key(b.items)


def _merged(old: Alert, group: NewAlert, touched: set[str], order: dict[str, float]) -> NewAlert:
    """``old`` with the steps of the ``touched`` series replaced by ``group``'s (a one-run update)."""
    kept = tuple(item for item in old.items if item.series not in touched)
    items = kept + group.items
    first, last, good = alert_range(items, order)
    return NewAlert(
        group.kind,
        first or old.first_revision,
        last or old.last_revision,
        good or old.good_revision,
        group.rule,
        items,
    )


def _names(items: Iterable[AlertItem]) -> set[str]:
    return {r for i in items for r in (i.revision, i.first_revision, i.last_revision, i.good_revision) if r}


def _judge(
    store: Store,
    series: Iterable[Series],
    rule: WatchRule,
    now_s: float,
    touched: set[str] | None,
) -> WatchUpdate:
    """Judge ``series`` (one at a time: a stream of stored series is never all in memory), store new
    alerts and update those found again; ``touched``: the keys of the series a one-run update judged
    (the other series' steps in a matched alert are kept)."""
    stored = load_alerts(store)
    cuts = _confirmed(stored)
    # A stored step is matched only within its own series: its revisions are looked up there only.
    stored_names: dict[str, set[str]] = {}
    for kept in stored:
        for item in kept.items:
            stored_names.setdefault(item.series, set()).update(_names([item]))
    ordering = RevisionOrder()
    reports: list[SeriesReport] = []
    items: list[AlertItem] = []
    candidates: list[AlertItem] = []  # component steps, judged with their family below
    for one in series:
        report = judge_series(one, rule, cuts.get(one.key, ()))
        missing = missing_item(one, now_s) if one.component == TOTAL else None
        own = [*report.items, *([missing] if missing is not None else [])]
        ordering.add(one, stored_names.get(one.key, set()), _names(own))
        reports.append(report)
        if one.component == TOTAL:
            items += own
        else:
            candidates += own
    if candidates:
        items += family_steps(candidates, family_sizes(series_names(store)), rule.alpha)
    order = ordering.places()
    fresh: list[NewAlert] = []
    replace: dict[int, NewAlert] = {}
    by_id = {alert.id: alert for alert in stored}
    steps = _index(stored)
    for alert in group_items(items, order, rule):
        match = _match(alert, steps, order)
        if match is None:
            fresh.append(alert)
            continue
        if match in replace:
            continue
        wanted = alert if touched is None else _merged(by_id[match], alert, touched, order)
        if not _same(by_id[match], wanted):
            replace[match] = wanted
    opened = save_alerts(store, fresh, replace, DEFAULT_BY) if fresh or replace else []
    return WatchUpdate(tuple(reports), tuple(opened), tuple(replace), tuple(load_alerts(store)), rule)


def recompute(
    store: Store,
    rule: WatchRule | None = None,
    now_s: float | None = None,
    metrics: Sequence[str] | None = None,
    rebuild: bool = True,
    by: Sequence[str] = (),
) -> WatchUpdate:
    """Rebuild every series of ``store`` from its stored boots (only those of ``metrics``, when
    given), keep them, judge them with ``rule``, store new alerts and update those found again;
    return what changed. Without ``rebuild`` the series kept in the store are judged as they are
    (no boot is read). With ``by`` (kinds of COMPONENT_KINDS) each component of those kinds is a
    series too, where it reaches the floor (its boots' logs read again); without, stored component
    series are kept as they were. ``now_s`` (Unix seconds, default: now) is the watchdog's clock.
    Raises StoreError, StatsError for a bad rule."""
    rule = rule or WatchRule()
    now_s = time.time() if now_s is None else now_s
    if not rebuild:
        wanted = set(metrics) if metrics is not None else None
        stream = (s for s in load_series(store) if wanted is None or s.metric in wanted)
        return _judge(store, stream, rule, now_s, None)
    series = collect_series(store, metrics, by=by)
    if metrics is None:
        replace_all_series(store, series, components=bool(by))
    else:
        put_series(store, series)
    return _judge(store, series, rule, now_s, None)


def recompute_run(
    store: Store, run: int, rule: WatchRule | None = None, now_s: float | None = None, by: Sequence[str] = ()
) -> WatchUpdate:
    """Add stored run ``run``'s boots to the series it touches (kept in the store: no other boot is
    read again), judge those series, and store or update their alerts; return what changed. A run
    added twice is counted once. Raises StoreLookupError for an unknown run, StoreError."""
    rule = rule or WatchRule()
    store.experiment(run)  # an unknown run: StoreLookupError
    fresh = run_series(store, run, by)
    known = {s.key: s for s in load_series(store, [s.key for s in fresh])}
    # A component below the floor in this run goes on only where its series is already kept.
    merged = [merge_series(known.get(s.key), s) for s in fresh if s.key in known or reaches_floor(s)]
    put_series(store, merged)
    touched = {s.key for s in merged}
    return _judge(store, merged, rule, time.time() if now_s is None else now_s, touched)


def watch_rule(
    back: int, fore: int, min_back: int, min_fore: int, jitter_ratio: float, alpha: float
) -> WatchRule:
    """Return the rule ``bootscope watch`` was given. Raises InputError naming a bad value."""
    from bootscope.errors import StatsError

    try:
        return WatchRule(back, fore, min_back, min_fore, jitter_ratio, alpha)
    except StatsError as error:
        raise InputError(f"watch: {error}") from None


def watch_command(
    db: str,
    rule: WatchRule | None = None,
    metrics: Sequence[str] | None = None,
    run: str | None = None,
    by: Sequence[str] = (),
) -> WatchUpdate:
    """Recompute the alerts of store ``db``: every series (:func:`recompute`), or with ``run`` (an
    id or ``latest``) only those that run touches (:func:`recompute_run`; its component series too
    when the store keeps some, ``by`` or not). Raises InputError for
    ``run`` with ``metrics`` or an unknown ``by`` kind, StoreLookupError for an unknown run or
    store, StoreError."""
    unknown = [kind for kind in by if kind not in COMPONENT_KINDS]
    if unknown:
        raise InputError(f"watch --by {unknown[0]}: choose {', '.join(COMPONENT_KINDS)}")
    with Store.open(db, create=False) as store:
        if run is None:
            return recompute(store, rule, metrics=metrics, by=by)
        if metrics:
            raise InputError("--run judges every metric of that run's series; leave out --metric")
        # A store that keeps component series (an earlier `watch --by KIND`) gets the run's
        # components too: without, those series would stop at the run before.
        kept = sorted({n.component.split(" ", 1)[0] for n in series_names(store) if n.component != TOTAL})
        return recompute_run(
            store, store.experiment(run).id, rule, by=by or [k for k in kept if k in COMPONENT_KINDS]
        )


def list_alerts(db: str, state: str | None = None, kind: str | None = None) -> list[Alert]:
    """Return the stored alerts of ``db`` (in ``state`` / of ``kind`` only, when given), newest
    first. Raises InputError for an unknown state, StoreError."""
    if state is not None and state not in STATES:
        raise InputError(f"--state must be one of {', '.join(STATES)} (got {state!r})")
    with Store.open(db, create=False) as store:
        alerts = load_alerts(store)
    return [
        a
        for a in reversed(alerts)
        if (state is None or a.state == state) and (kind is None or a.kind == kind)
    ]


def show_alert(db: str, alert_id: int) -> Alert:
    """Return stored alert ``alert_id`` with its items and history. Raises StoreLookupError for an
    unknown alert, StoreError."""
    from bootscope.errors import StoreLookupError

    with Store.open(db, create=False) as store:
        found = load_alerts(store, [alert_id])
        if not found:
            raise StoreLookupError(f"{store.name}: no alert {alert_id} (see `bootscope alerts`)")
    return found[0]


def triage_alert(db: str, alert_id: int, state: str, note: str, by: str) -> Alert:
    """Set alert ``alert_id``'s state with a note, recorded with who and when, and return it; a
    confirmed alert restarts the baseline of its series at the next recomputation. Raises InputError
    for an unknown state or an empty ``by``, StoreLookupError for an unknown alert."""
    if state not in STATES:
        raise InputError(f"--state must be one of {', '.join(STATES)} (got {state!r})")
    if not by.strip() or len(by) > 128:
        raise InputError("--by names who triaged it (1 to 128 characters)")
    with Store.open(db, create=False) as store:
        add_event(store, alert_id, state, by.strip(), note)
    return show_alert(db, alert_id)


__all__ = [
    "WatchUpdate",
    "kind_of",
    "list_alerts",
    "recompute",
    "show_alert",
    "triage_alert",
    "watch_command",
]

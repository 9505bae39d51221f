"""Every series judged, its steps grouped into alerts by revision range, and a missing-data watchdog.

A series is cut at every step of a **confirmed** alert (a confirmed change restarts the baseline:
the points before it no longer judge the points after it). The component series of one kind on one
machine (every initcall, ...) are a **family**: their steps are kept by Benjamini-Hochberg over the
family (:func:`family_steps`). Steps of one kind (regression: slower, improvement: faster) whose
plausible revision ranges share revisions, in any series, become one alert (Chromium's dashboard
groups anomalies whose revision ranges overlap); its range is the revisions they all hold, the
likeliest place of one cause. Steps are grouped most precise first, so a step whose wide range
reaches over two changes joins one of them (the one holding its own revision) and does not make
the two one alert. A total series whose newest point is older than ``MISSING_CADENCES`` times its
usual spacing of points (the median gap, with at least ``MIN_CADENCE_POINTS`` dated points) gets a
``missing`` alert (a component that stops appearing, an initcall a newer kernel no longer has, is
not a silent series).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from bootscope.stats.modes import shape_tests, tail_hits, two_modes
from bootscope.stats.series_watch import (
    FloatArray,
    SeriesChange,
    WatchRule,
    jitter,
    watch_series,
    watch_shares,
)
from bootscope.store.watch import AlertItem, NewAlert
from bootscope.store.watch_series import TOTAL, Series, SeriesName
from bootscope.usecases.watch.series import COMPONENT_FLOOR_S

KIND_REGRESSION = "regression"
KIND_IMPROVEMENT = "improvement"
KIND_MISSING = "missing"
KINDS = (KIND_REGRESSION, KIND_IMPROVEMENT, KIND_MISSING)
# A second series of every series whose points hold two or more boots: per point, the share of its
# boots above the series' 80th percentile. A step in it is a change of shape (a slow mode grown more
# frequent) that may leave the median where it was.
SLOW_SHARE = "slow share"
MISSING_CADENCES = 3.0
MIN_CADENCE_POINTS = 4


@dataclass(frozen=True, slots=True)
class SeriesReport:
    """One series judged: its key, metric, points, jitter (metric's unit; None: under three points),
    whether it had enough history, and its steps as alert items."""

    key: str
    metric: str
    points: int
    jitter: float | None
    enough_history: bool
    items: tuple[AlertItem, ...]


def _segments(series: Series, confirmed: Sequence[str]) -> list[tuple[int, int]]:
    """[start, stop) of the series' pieces between confirmed steps (revision: first point after)."""
    cuts = sorted({i for i, revision in enumerate(series.revisions) if revision in confirmed and i > 0})
    bounds = [0, *cuts, len(series.revisions)]
    return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


def _boots(series: Series, start: int, stop: int) -> FloatArray:
    """Every boot's value of points start..stop-1."""
    ends = np.cumsum(series.counts)
    first = int(ends[start - 1]) if start > 0 else 0
    result: FloatArray = series.values[first : int(ends[stop - 1])] if stop > start else np.zeros(0)
    return result


def _shape_detail(series: Series, at: int, change: SeriesChange) -> dict[str, Any]:
    """The boots on either side of a step: their modes (median and share) and the shape tests."""
    back = _boots(series, at - change.n_back, at)
    fore = _boots(series, at, at + change.n_fore)
    detail: dict[str, Any] = {"boots_back": int(back.size), "boots_fore": int(fore.size)}
    tests = shape_tests(back, fore)
    if tests is not None:
        detail |= {"ks_p": tests.ks_p, "ad_p": tests.ad_p}
    for side, boots in (("modes_before", back), ("modes_after", fore)):
        modes = two_modes(boots)
        if modes is not None:
            detail[side] = [[mode.median, mode.share] for mode in modes]
    return detail


def _item(
    series: Series, change: SeriesChange, offset: int, rule: WatchRule, component: str | None = None
) -> AlertItem:
    revisions = series.revisions
    good = revisions[offset + change.first_position - 1] if offset + change.first_position > 0 else None
    return AlertItem(
        series=series.key,
        fingerprint=series.fingerprint,
        metric=series.metric,
        component=series.component if component is None else component,
        revision=revisions[offset + change.position],
        first_revision=revisions[offset + change.first_position],
        last_revision=revisions[offset + change.last_position],
        good_revision=good,
        shift=change.shift,
        ci=change.shift_ci,
        p=change.p,
        jitter=change.jitter,
        jitter_ratio=change.jitter_ratio if np.isfinite(change.jitter_ratio) else None,
        before=change.before_median,
        detail={
            "n_back": change.n_back,
            "n_fore": change.n_fore,
            "alpha": rule.alpha,
            **_shape_detail(series, offset + change.position, change),
        },
    )


def family_key(fingerprint: Mapping[str, str], metric: str, component: str) -> tuple[str, str, str]:
    """Return the family of a series: its fingerprint, metric and component kind (``total`` for a
    total, else the component's first word: ``initcall``, ``phase``, ...)."""
    kind = component.split(" ", 1)[0] if component != TOTAL else TOTAL
    return json.dumps(sorted(fingerprint.items())), metric, kind


def family_sizes(names: Iterable[SeriesName]) -> dict[tuple[str, str, str], int]:
    """Return each family (:func:`family_key`) of the series named and how many series it holds:
    the components of one kind on one machine are judged together (:func:`family_steps`)."""
    sizes: dict[tuple[str, str, str], int] = {}
    for name in names:
        family = family_key(name.fingerprint, name.metric, name.component)
        sizes[family] = sizes.get(family, 0) + 1
    return sizes


def family_steps(
    items: Sequence[AlertItem], sizes: Mapping[tuple[str, str, str], int], alpha: float
) -> list[AlertItem]:
    """Return the component steps of ``items`` that hold in their family: per family and revision
    (the steps placed there: one change), Benjamini-Hochberg at ``alpha`` over the family's series
    (a family of m series: the k smallest p-values are kept where the k-th is at most
    k * alpha / m). With nothing moved, the family raises a false step no more often than one
    series would; where a change moves many of its members (a slab debug option slows every
    allocating initcall) each needs less than alpha / m, and a step alone at its revision needs
    alpha / m. Each step kept records its family's size and the threshold it passed."""
    by_family: dict[tuple[tuple[str, str, str], str], list[AlertItem]] = {}
    for item in items:
        family = family_key(item.fingerprint, item.metric, item.component)
        by_family.setdefault((family, item.revision), []).append(item)
    kept: list[AlertItem] = []
    for (family, _), members in by_family.items():
        size = max(sizes.get(family, 1), len(members))
        ranked = sorted(members, key=lambda i: 1.0 if i.p is None else i.p)
        passing = [k for k, item in enumerate(ranked, start=1) if (item.p or 1.0) <= k * alpha / size]
        count = max(passing, default=0)
        threshold = count * alpha / size
        kept += [
            replace(item, detail={**item.detail, "family_series": size, "family_p_max": threshold})
            for item in ranked[:count]
        ]
    return kept


def judge_series(series: Series, rule: WatchRule, confirmed: Sequence[str] = ()) -> SeriesReport:
    """Return the steps of one series as alert items, each piece between ``confirmed`` revisions
    (first points after confirmed steps) judged on its own. A component series' steps are
    candidates, to be judged with their family (:func:`family_steps`); one smaller than
    COMPONENT_FLOOR_S is left out."""
    medians = series.medians
    items: list[AlertItem] = []
    enough = False
    shaped = int(series.counts.max(initial=0)) > 1 and series.component == TOTAL
    for start, stop in _segments(series, confirmed):
        verdict = watch_series(medians[start:stop], rule)
        enough = enough or verdict.enough_history
        items += [
            _item(series, change, start, rule)
            for change in verdict.changes
            if series.component == TOTAL or abs(change.shift) >= COMPONENT_FLOOR_S
        ]
        if not shaped:
            continue
        # A change of shape is looked for between the level's steps (a step moves the tail too).
        cuts = [start, *(start + change.position for change in verdict.changes), stop]
        for low, high in itertools.pairwise(cuts):
            hits, _ = tail_hits(_boots(series, low, high), series.counts[low:high])
            tail = watch_shares(hits, series.counts[low:high], rule)
            items += [_item(series, change, low, rule, SLOW_SHARE) for change in tail.changes]
    whole = jitter(medians[-rule.back_points :])
    return SeriesReport(series.key, series.metric, len(series.revisions), whole, enough, tuple(items))


def missing_item(series: Series, now_s: float) -> AlertItem | None:
    """Return a missing-data item for a series silent for longer than MISSING_CADENCES of its usual
    spacing, None otherwise (or with too few dated points to know its spacing)."""
    times = series.times_s[~np.isnan(series.times_s)]
    if times.size < MIN_CADENCE_POINTS:
        return None
    gaps = np.diff(np.sort(times))
    cadence_s = float(np.median(gaps))
    silent_s = now_s - float(times.max())
    if cadence_s <= 0 or silent_s <= MISSING_CADENCES * cadence_s:
        return None
    last = series.revisions[-1]
    return AlertItem(
        series=series.key,
        fingerprint=series.fingerprint,
        metric=series.metric,
        component=series.component,
        revision=last,
        first_revision=last,
        last_revision=last,
        good_revision=last,
        detail={"cadence_s": cadence_s, "silent_s": silent_s},
    )


def kind_of(item: AlertItem) -> str:
    """Return the kind of an alert item: missing (no shift), regression (slower) or improvement."""
    if item.shift is None:
        return KIND_MISSING
    return KIND_REGRESSION if item.shift > 0 else KIND_IMPROVEMENT


class RevisionOrder:
    """One order of revisions across every series, built one series at a time (a full recomputation
    streams its series): the earliest revision time seen, then the order revisions were first stored
    (undated revisions after dated ones). Only the revisions asked for are kept."""

    def __init__(self) -> None:
        self._first: dict[str, tuple[bool, float, int]] = {}

    def add(self, series: Series, *wanted: Collection[str]) -> None:
        """Note where ``series`` holds any revision of the ``wanted`` collections."""
        found: set[str] = set()
        for group in wanted:
            found |= (
                set(group).intersection(series.revisions)
                if not isinstance(group, set)
                else group.intersection(series.revisions)
            )
        if not found:
            return
        for i, revision in enumerate(series.revisions):
            if revision not in found:
                continue
            time_s = float(series.times_s[i])
            key = (bool(np.isnan(time_s)), 0.0 if np.isnan(time_s) else time_s, int(series.first_seen[i]))
            if revision not in self._first or key < self._first[revision]:
                self._first[revision] = key

    def places(self) -> dict[str, float]:
        """Return revision -> its place in the order."""
        ordered = sorted(self._first, key=lambda revision: self._first[revision])
        return {revision: float(place) for place, revision in enumerate(ordered)}


@dataclass(slots=True)
class _Group:
    """Steps becoming one alert: the revisions (places in the order) every step's range holds."""

    low: float
    high: float
    items: list[AlertItem]


def group_items(items: Sequence[AlertItem], order: Mapping[str, float], rule: WatchRule) -> list[NewAlert]:
    """Return one alert per kind and shared revision range (see the module docstring), in revision
    order; a missing-data item is an alert of its own per series."""
    alerts: list[NewAlert] = []
    by_kind: dict[str, list[AlertItem]] = {}
    for item in items:
        by_kind.setdefault(kind_of(item), []).append(item)
    for kind, members in by_kind.items():
        if kind == KIND_MISSING:
            alerts += [
                NewAlert(kind, i.first_revision, i.last_revision, i.good_revision, rule.to_dict(), (i,))
                for i in members
            ]
            continue
        groups: list[_Group] = []
        # The most precise steps first: a step with a wide range joins the group it overlaps (the one
        # holding its own revision first); it does not glue two groups together.
        for item in sorted(members, key=lambda i: (_width(i, order), order[i.first_revision])):
            low, high, at = order[item.first_revision], order[item.last_revision], order[item.revision]
            fits = [group for group in groups if group.low <= high and low <= group.high]
            if not fits:
                groups.append(_Group(low, high, [item]))
                continue
            group = min(
                fits, key=lambda g: (not g.low <= at <= g.high, min(abs(at - g.low), abs(at - g.high)))
            )
            group.low, group.high = max(group.low, low), min(group.high, high)
            group.items.append(item)
        alerts += [_alert(kind, group.items, order, rule) for group in groups]
    alerts.sort(key=lambda a: (order.get(a.first_revision, 0.0), a.kind))
    return alerts


def _width(item: AlertItem, order: Mapping[str, float]) -> float:
    return order[item.last_revision] - order[item.first_revision]


def alert_range(
    items: Sequence[AlertItem], order: Mapping[str, float]
) -> tuple[str | None, str | None, str | None]:
    """Return (first, last, good) revisions of a group of steps: the revisions every step's range
    holds (the latest first, the earliest last; when the ranges share none, the earliest first and
    the latest last), and the latest good revision before that first, in ``order`` (None where no
    revision of that kind is ordered)."""
    firsts = [i.first_revision for i in items if i.first_revision in order]
    lasts = [i.last_revision for i in items if i.last_revision in order]
    goods = [i.good_revision for i in items if i.good_revision is not None and i.good_revision in order]
    first = max(firsts, key=order.__getitem__, default=None)
    last = min(lasts, key=order.__getitem__, default=None)
    if first is not None and last is not None and order[first] > order[last]:
        first = min(firsts, key=order.__getitem__)
        last = max(lasts, key=order.__getitem__)
    before = [g for g in goods if first is None or order[g] < order[first]]
    good = (
        max(before, key=order.__getitem__, default=None)
        if before
        else min(goods, key=order.__getitem__, default=None)
    )
    return first, last, good


def _alert(kind: str, group: Sequence[AlertItem], order: Mapping[str, float], rule: WatchRule) -> NewAlert:
    first, last, good = alert_range(group, order)
    assert first is not None and last is not None  # every step's revisions are ordered
    return NewAlert(kind, first, last, good, rule.to_dict(), tuple(group))

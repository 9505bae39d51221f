"""What the dashboard (``bootscope serve``) shows that no single command answers: the overview (open
alerts, watched series grouped by fingerprint with their recent medians, runs in progress) and one
series point by point (each point's median with its interval, the runs behind it, the alerts that
name it). Every other page calls the use case its command calls."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from bootscope.errors import StoreLookupError
from bootscope.stats.summary import median_ci_ranks
from bootscope.store import Store
from bootscope.store.owner import shown_status
from bootscope.store.records import ExperimentSummary
from bootscope.store.run_ids import experiment_ids
from bootscope.store.watch import Alert, load_alerts
from bootscope.store.watch_series import Series, SeriesName, load_series, run_labels, series_names
from bootscope.usecases.view_types import RunView
from bootscope.usecases.views import run_view
from bootscope.usecases.watch.labels import REVISION
from bootscope.usecases.watch.series import UNKNOWN_REVISION

if TYPE_CHECKING:
    from bootscope.usecases.tune.stored import StoredTune

# Alerts a person still has to act on (the others are closed: invalid, fixed, wontfix).
OPEN_STATES = ("untriaged", "acknowledged", "confirmed")
# Points drawn in an overview sparkline: the most recent ones.
SPARK_POINTS = 60
# Series shown per overview page; a store of 10,000 series is paged, never read whole.
SERIES_PER_PAGE = 50
# Runs listed as recent on the overview.
RECENT_RUNS = 10
# Runs per page of the runs page.
RUNS_PER_PAGE = 100


@dataclass(frozen=True, slots=True)
class SeriesLine:
    """One series on the overview: its name, points, last revision and median (the metric's unit),
    the last ``SPARK_POINTS`` medians, and the open alerts that name it."""

    key: str
    metric: str
    component: str
    fingerprint: Mapping[str, str]
    points: int
    last_revision: str | None
    last_median: float | None
    spark: tuple[float, ...]
    alert_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class FingerprintGroup:
    """The series of one fingerprint on an overview page."""

    fingerprint: Mapping[str, str]
    series: tuple[SeriesLine, ...]


@dataclass(frozen=True, slots=True)
class Overview:
    """The overview: open alerts (newest first), one page of series grouped by fingerprint (series
    with an open alert first), how many series there are, the runs in progress and the latest runs."""

    open_alerts: tuple[Alert, ...]
    groups: tuple[FingerprintGroup, ...]
    series_total: int
    page: int
    pages: int
    running: tuple[ExperimentSummary, ...]
    recent: tuple[ExperimentSummary, ...]
    query: str = ""


@dataclass(frozen=True, slots=True)
class SeriesPoint:
    """One point of a series: its revision and time (Unix seconds, None unknown), its boots, their
    median and the median's distribution-free interval (None for too few boots), and the stored runs
    of that revision."""

    revision: str
    time_s: float | None
    boots: int
    median: float
    ci: tuple[float, float] | None
    runs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class AlertMark:
    """An alert that names a series: its id, kind, state, and the revision its step is placed at."""

    alert_id: int
    kind: str
    state: str
    revision: str
    first_revision: str
    last_revision: str


@dataclass(frozen=True, slots=True)
class SeriesDetail:
    """One series point by point, with the alerts that name it."""

    key: str
    metric: str
    component: str
    fingerprint: Mapping[str, str]
    points: tuple[SeriesPoint, ...]
    alerts: tuple[AlertMark, ...]


def _open_by_series(alerts: Sequence[Alert]) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for alert in alerts:
        for item in alert.items:
            found.setdefault(item.series, []).append(alert.id)
    return found


def _line(series: Series, alert_ids: Sequence[int]) -> SeriesLine:
    medians = series.medians
    return SeriesLine(
        key=series.key,
        metric=series.metric,
        component=series.component,
        fingerprint=dict(series.fingerprint),
        points=len(series.revisions),
        last_revision=series.revisions[-1] if series.revisions else None,
        last_median=float(medians[-1]) if len(medians) else None,
        spark=tuple(float(v) for v in medians[-SPARK_POINTS:]),
        alert_ids=tuple(sorted(set(alert_ids))),
    )


def _groups(lines: Sequence[SeriesLine]) -> tuple[FingerprintGroup, ...]:
    grouped: dict[tuple[tuple[str, str], ...], list[SeriesLine]] = {}
    for line in lines:
        grouped.setdefault(tuple(sorted(line.fingerprint.items())), []).append(line)
    return tuple(FingerprintGroup(dict(key), tuple(members)) for key, members in grouped.items())


def _page_names(names: Sequence[SeriesName], alerted: Mapping[str, object], page: int) -> list[SeriesName]:
    ordered = sorted(names, key=lambda n: (n.key not in alerted, n.metric, n.component != "total", n.key))
    start = (page - 1) * SERIES_PER_PAGE
    return ordered[start : start + SERIES_PER_PAGE]


def _matches(name: SeriesName, words: Sequence[str]) -> bool:
    text = " ".join(
        [name.key, name.metric, name.component, *(f"{k}={v}" for k, v in name.fingerprint.items())]
    )
    return all(word in text.lower() for word in words)


def overview(db: str, page: int = 1, query: str = "") -> Overview:
    """Return the overview of ``db``: its open alerts, page ``page`` (1-based) of its series (only
    those whose key, metric, component or ``field=value`` of their fingerprint hold every word of
    ``query``, in any case), and its runs in progress and latest runs. Raises StoreLookupError for a
    page past the last (page 1 of a store without series is empty, not missing), StoreError."""
    words = query.lower().split()
    with Store.open(db, create=False) as store:
        alerts = [a for a in reversed(load_alerts(store)) if a.state in OPEN_STATES]
        alerted = _open_by_series(alerts)
        names = [n for n in series_names(store) if _matches(n, words)] if words else series_names(store)
        pages = max(1, -(-len(names) // SERIES_PER_PAGE))
        if not 1 <= page <= pages:
            raise StoreLookupError(f"{store.name}: no page {page} of series (there are {pages})")
        shown = _page_names(names, alerted, page)
        loaded = {s.key: s for s in load_series(store, [n.key for n in shown])}
        wanted = {*experiment_ids(store, status="running"), *experiment_ids(store, newest=RECENT_RUNS)}
        experiments = store.list_experiments(sorted(wanted))
    lines = [_line(loaded[n.key], alerted.get(n.key, ())) for n in shown if n.key in loaded]
    return Overview(
        open_alerts=tuple(alerts),
        groups=_groups(lines),
        series_total=len(names),
        page=page,
        pages=pages,
        running=tuple(e for e in experiments if shown_status(e.experiment).startswith("running")),
        recent=tuple(reversed(experiments))[:RECENT_RUNS],
        query=query,
    )


@lru_cache(maxsize=4096)
def _ci_ranks(boots: int, alpha: float) -> tuple[int, int] | None:
    return median_ci_ranks(boots, alpha)


def _points(series: Series, runs_of: Mapping[str, list[int]], alpha: float) -> tuple[SeriesPoint, ...]:
    ends = np.cumsum(series.counts)
    points = []
    for i, revision in enumerate(series.revisions):
        n = int(series.counts[i])
        values = np.sort(series.values[ends[i] - n : ends[i]])
        ranks = _ci_ranks(n, alpha)
        ci = None if ranks is None else (float(values[ranks[0] - 1]), float(values[ranks[1] - 1]))
        time_s = float(series.times_s[i])
        points.append(
            SeriesPoint(
                revision=revision,
                time_s=None if np.isnan(time_s) else time_s,
                boots=n,
                median=float(series.medians[i]),
                ci=ci,
                runs=tuple(sorted(runs_of.get(revision, ()))),
            )
        )
    return tuple(points)


def _marks(alerts: Sequence[Alert], key: str) -> tuple[AlertMark, ...]:
    return tuple(
        AlertMark(a.id, a.kind, a.state, item.revision, item.first_revision, item.last_revision)
        for a in alerts
        for item in a.items
        if item.series == key
    )


def series_detail(db: str, key: str, alpha: float) -> SeriesDetail:
    """Return stored series ``key`` of ``db`` point by point: each point's median with its
    (1 - ``alpha``) interval and the stored runs of its revision (a run's ``revision`` label), and
    every alert that names the series. Raises StoreLookupError for an unknown key, StoreError."""
    with Store.open(db, create=False) as store:
        found = list(load_series(store, [key]))
        if not found:
            raise StoreLookupError(f"{store.name}: no series {key[:64]!r} (see the overview)")
        series = found[0]
        labels = run_labels(store, sorted(series.runs))
        alerts = load_alerts(store)
    runs_of: dict[str, list[int]] = {}
    for run, (meta, kernel) in labels.items():
        # the revision a series gives a run (usecases.watch.series): its label, else its kernel
        runs_of.setdefault(meta.get(REVISION) or kernel or UNKNOWN_REVISION, []).append(run)
    return SeriesDetail(
        key=series.key,
        metric=series.metric,
        component=series.component,
        fingerprint=dict(series.fingerprint),
        points=_points(series, runs_of, alpha),
        alerts=_marks(alerts, key),
    )


@dataclass(frozen=True, slots=True)
class ServedRun:
    """A run as its page shows it: the report's view, every boot (index, variant, outcome) and the
    tune it belongs to (None: no tune's)."""

    view: RunView
    boots: tuple[tuple[int, str, str], ...]
    tune: StoredTune | None = None


def served_run(db: str, run_id: int, alpha: float) -> ServedRun:
    """Return stored run ``run_id`` as ``bootscope report --run`` draws it (summaries, comparisons
    at ``alpha``, failures, its first counted boot as the example; the per-variant diffs are the
    compare page's), the list of its boots and its tune (read again without booting). Raises
    StoreLookupError for an unknown run."""
    from bootscope.usecases.tune.stored import stored_tune  # the runner's modules: only here

    with Store.open(db, create=False) as store:
        view = run_view(store, str(run_id), alpha)
        boots = tuple((b.index, b.variant, b.outcome) for b in store.boots(run_id) if not b.superseded)
        tune = stored_tune(store, run_id)
    return ServedRun(view, boots, tune)


@dataclass(frozen=True, slots=True)
class RunsPage:
    """One page of the stored runs, newest first, and how many runs and pages there are."""

    runs: tuple[ExperimentSummary, ...]
    total: int
    page: int
    pages: int


def runs_page(db: str, page: int = 1) -> RunsPage:
    """Return page ``page`` (1-based, ``RUNS_PER_PAGE`` runs, newest first) of ``db``'s runs with
    their boot counts (only that page's boots are counted). Raises StoreLookupError for a page past
    the last, StoreError."""
    with Store.open(db, create=False) as store:
        ids = experiment_ids(store)
        pages = max(1, -(-len(ids) // RUNS_PER_PAGE))
        if not 1 <= page <= pages:
            raise StoreLookupError(f"{store.name}: no page {page} of runs (there are {pages})")
        newest_first = ids[::-1][(page - 1) * RUNS_PER_PAGE : page * RUNS_PER_PAGE]
        runs = store.list_experiments(newest_first)
    return RunsPage(tuple(reversed(runs)), len(ids), page, pages)

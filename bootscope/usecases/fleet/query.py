"""The fleet queries (``fleet summary``, ``outliers``, ``compare``) on DuckDB over the Parquet copy.

DuckDB does the scanning, grouping, ranking and medians; the statistics that need more than an
order statistic (intervals of quantiles, binomial intervals, the stratified shift) come from
``bootscope.stats``. DuckDB is told never to install or load an extension on its own: this machine
(and many a lab) has no internet, and Parquet support is built into the Python wheel.

Quantiles are order statistics: the p-quantile of n values is the value of rank ceil(p * n) (the
inverse of the empirical distribution function; numpy's ``method="inverted_cdf"``), and its interval
is the pair of order statistics that covers the true quantile with at least 95 % probability,
whatever the distribution (``stats.latency.order_statistic_ranks``). Times come from ok boots only;
failed, incomplete and not-run boots are counted apart (``results.py``).

Fields for ``--by``, ``--strata`` and ``--cohort-field``: the metadata of the ``--meta`` CSV, the
fields each log gives (``arch``, ``cpus``, ``memory_gib``: ``host_fields.py``), ``kernel_series``
(from the kernel release) and the fixed columns (``kernel_release``, ``format``). Groups are in
natural order ("4.19" before "5.10", "2" CPUs before "16").
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bootscope.errors import InputError
from bootscope.metrics import UNIT_METRIC_PREFIX
from bootscope.stats.latency import clopper_pearson, order_statistic_ranks
from bootscope.stats.stratified import stratified_shift
from bootscope.store.fleet import OUTCOME_FAILED, OUTCOME_INCOMPLETE, OUTCOME_NOT_RUN, OUTCOME_OK
from bootscope.store.parquet import FIXED_COLUMNS, META_PREFIX, METRIC_PREFIX, ParquetSnapshot
from bootscope.usecases.fleet.host_fields import DECIMAL_FIELDS, KERNEL_SERIES, LOG_FIELDS
from bootscope.usecases.fleet.results import (
    CONFIDENCE,
    CohortComparison,
    FleetSummary,
    GroupSummary,
    OutcomeCounts,
    Outlier,
    OutlierList,
    QuantileValue,
)

QUANTILES = (0.5, 0.9, 0.99)
MAD_SCALE = 1.4826  # MAD * 1.4826 estimates the standard deviation of normal data
OUTLIER_Z = 3.5  # Iglewicz and Hoaglin's cut for the modified z-score
# kernel_series from the stored release: "6.1" of "6.1.0-56-cloud-amd64", "2.6.26" of "2.6.26-rc9"
# (the 2.6 kernels' series is their third number); NULL where no release was printed
_SERIES_SQL = (
    "NULLIF(regexp_extract(CAST(kernel_release AS VARCHAR), '^(2\\.6\\.[0-9]+|[0-9]+\\.[0-9]+)', 1), '')"
)
_OUTCOMES = (
    ("ok", OUTCOME_OK),
    ("failed", OUTCOME_FAILED),
    ("incomplete", OUTCOME_INCOMPLETE),
    ("not_run", OUTCOME_NOT_RUN),
)


def connect() -> Any:
    """Return a DuckDB connection that never installs or loads extensions on its own."""
    import duckdb  # heavy: only the fleet queries need it

    return duckdb.connect(
        config={
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "threads": os.cpu_count() or 1,
        }
    )


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class FleetView:
    """The fleet boots of one Parquet snapshot as the DuckDB view ``boots``; ``notes`` collects what
    the queries should say about the fields they were given (a log field no boot holds)."""

    def __init__(self, snapshot: ParquetSnapshot) -> None:
        if not snapshot.parts:
            raise InputError("no fleet boots stored yet: run `bootscope fleet import` first")
        self.con = connect()
        files = ", ".join("'" + str(part).replace("'", "''") + "'" for part in snapshot.parts)
        self.con.execute(f"CREATE VIEW boots AS SELECT * FROM read_parquet([{files}], union_by_name = true)")
        self.columns = [row[0] for row in self.con.execute("DESCRIBE boots").fetchall()]
        self.notes: list[str] = []

    def field(self, name: str) -> str:
        """Return the SQL of a field: a metadata column, a fixed column (``kernel_release``,
        ``format``, ``path``, ``outcome``), ``kernel_series`` (from the release), or NULL for a log
        field (``arch``, ``cpus``, ``memory_gib``) that no stored boot holds (a note says so).
        Raises InputError naming the fields there are."""
        if name in FIXED_COLUMNS:
            return _quote(name)
        if META_PREFIX + name in self.columns:
            return _quote(META_PREFIX + name)
        if name == KERNEL_SERIES:
            return _SERIES_SQL
        if name in LOG_FIELDS:
            note = (
                f"no boot has the field {name}: no log states it, or the logs were imported by a"
                " bootscope that did not store it (import them into a new --db to have it)"
            )
            if note not in self.notes:
                self.notes.append(note)
            return "NULL"
        known = sorted(c[len(META_PREFIX) :] for c in self.columns if c.startswith(META_PREFIX))
        fields = sorted({*known, *LOG_FIELDS, KERNEL_SERIES, "kernel_release", "format"})
        raise InputError(f"no field {name!r} in the fleet; fields: {', '.join(fields)}")

    def metric(self, name: str) -> str:
        """Return the quoted column of a metric; raises InputError naming the metrics stored (the
        ``unit:NAME`` ones of systemd-analyze pastes by their count)."""
        if METRIC_PREFIX + name in self.columns:
            return _quote(METRIC_PREFIX + name)
        known = sorted(c[len(METRIC_PREFIX) :] for c in self.columns if c.startswith(METRIC_PREFIX))
        named = [m for m in known if not m.startswith(UNIT_METRIC_PREFIX)]
        units = len(known) - len(named)
        listed = ", ".join([*named, *([f"{units} {UNIT_METRIC_PREFIX}NAME"] if units else [])])
        raise InputError(f"no metric {name!r} in the fleet; stored: {listed or 'none'}")

    def counts(self, where: str = "TRUE", params: Sequence[object] = ()) -> OutcomeCounts:
        """Return the boots matching the SQL condition ``where`` by outcome."""
        row = self.con.execute(f"SELECT {_COUNT_OUTCOMES} FROM boots WHERE {where}", list(params)).fetchone()
        return OutcomeCounts(*(int(v or 0) for v in row)) if row else OutcomeCounts()


_COUNT_OUTCOMES = ", ".join(f"count(*) FILTER (outcome = '{value}') AS {alias}" for alias, value in _OUTCOMES)


def _keys(view: FleetView, by: Sequence[str]) -> tuple[str, list[str]]:
    aliases = [f"g{i}" for i in range(len(by))]
    select = ", ".join(
        f"CAST({view.field(name)} AS VARCHAR) AS {alias}" for name, alias in zip(by, aliases, strict=True)
    )
    return select, aliases


_Run = tuple[int, float | str]
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def natural_key(
    key: Sequence[str | None], by: Sequence[str] = ()
) -> tuple[tuple[int, tuple[_Run, ...]], ...]:
    """Return a sort key for the group keys of fields ``by``: numbers inside the text compare as
    numbers, run by run ("4.19" before "5.10" before "5.15", "2" before "16"); a field of decimal
    sizes (``memory_gib``) compares as decimals ("0.0625" before "0.75"); a missing value last."""
    parts: list[tuple[int, tuple[_Run, ...]]] = []
    for index, value in enumerate(key):
        if value is None:
            parts.append((1, ()))
            continue
        field = by[index] if index < len(by) else ""
        if field in DECIMAL_FIELDS and _NUMBER.fullmatch(value):
            parts.append((0, ((0, float(value)),)))
            continue
        runs = re.findall(r"\d+|\D+", value)
        parts.append((0, tuple((0, float(r)) if r.isdigit() else (1, r) for r in runs)))
    return tuple(parts)


def summary(view: FleetView, metric: str, by: Sequence[str]) -> FleetSummary:
    """Return per group (``by`` fields; none: one group) n (ok boots with the metric), p50/p90/p99
    with distribution-free intervals, the boots by outcome and the failure rate (failed of ok +
    failed) with an exact binomial interval. Raises InputError for an unknown field or metric."""
    column = view.metric(metric)
    keys, aliases = _keys(view, by)
    base = f"SELECT {keys + ', ' if keys else ''}outcome, {column} AS x FROM boots"
    group = ", ".join(aliases)
    counts = view.con.execute(
        f"SELECT {group + ', ' if group else ''}{_COUNT_OUTCOMES}, "
        f"count(x) FILTER (outcome = '{OUTCOME_OK}') AS n FROM ({base}) "
        f"{'GROUP BY ' + group if group else ''}"
    ).fetchall()
    wanted: list[tuple[Any, ...]] = []
    plans = []
    width = len(aliases)
    for row in sorted(counts, key=lambda r: natural_key(r[:width], by)):
        key = tuple(row[:width])
        outcomes = OutcomeCounts(*(int(v) for v in row[width : width + len(_OUTCOMES)]))
        n = int(row[-1])
        ranks = []
        for p in QUANTILES:
            if n == 0:
                ranks.append((0, 0, 0))
                continue
            low, high = order_statistic_ranks(n, p, CONFIDENCE)
            ranks.append((max(1, math.ceil(p * n)), low, high if high <= n else 0))
        plans.append((key, outcomes, n, ranks))
        wanted.extend((*key, r) for triple in ranks for r in triple if r > 0)
    values = _ranked_values(view, base, aliases, wanted)
    groups = []
    for key, outcomes, n, ranks in plans:
        quantiles = tuple(
            QuantileValue(p, values.get((*key, point)), values.get((*key, low)), values.get((*key, high)))
            for p, (point, low, high) in zip(QUANTILES, ranks, strict=True)
        )
        decided = outcomes.decided
        failed_ci = clopper_pearson(outcomes.failed, decided, CONFIDENCE) if decided else None
        groups.append(GroupSummary(key, n, quantiles, outcomes, failed_ci))
    return FleetSummary(metric, tuple(by), tuple(groups), notes=tuple(view.notes))


def _ranked_values(
    view: FleetView, base: str, aliases: Sequence[str], wanted: Sequence[tuple[Any, ...]]
) -> dict[tuple[Any, ...], float]:
    """Return (key..., rank) -> the value of that 1-based rank among the group's ok boots."""
    if not wanted:
        return {}
    import pyarrow as pa

    names = [*aliases, "r"]
    table = pa.table(
        {
            name: pa.array([w[i] for w in wanted], pa.string() if i < len(aliases) else pa.int64())
            for i, name in enumerate(names)
        }
    )
    view.con.register("wanted_ranks", table)
    partition = f"PARTITION BY {', '.join(aliases)} " if aliases else ""
    join = " AND ".join([*(f"o.{a} IS NOT DISTINCT FROM w.{a}" for a in aliases), "o.r = w.r"])
    rows = view.con.execute(
        f"SELECT {''.join(f'o.{a}, ' for a in aliases)}o.r, o.x FROM ("
        f"SELECT *, row_number() OVER ({partition}ORDER BY x) AS r FROM ({base}) "
        f"WHERE outcome = '{OUTCOME_OK}' AND x IS NOT NULL) o JOIN wanted_ranks w ON {join}"
    ).fetchall()
    view.con.unregister("wanted_ranks")
    return {tuple(row[:-1]): float(row[-1]) for row in rows}


def outliers(view: FleetView, metric: str, by: Sequence[str], z_cut: float = OUTLIER_Z) -> list[Outlier]:
    """Return the boots whose modified z-score within their group exceeds ``z_cut`` in size, most
    extreme first (a group whose MAD is 0 flags nothing). Raises InputError for an unknown field or
    metric."""
    column = view.metric(metric)
    keys, aliases = _keys(view, by)
    host = view.field("host") if META_PREFIX + "host" in view.columns else "NULL"
    partition = f"PARTITION BY {', '.join(aliases)}" if aliases else ""
    rows = view.con.execute(
        f"WITH b AS (SELECT {keys + ', ' if keys else ''}path, boot, CAST({host} AS VARCHAR) AS host, "
        f"{column} AS x FROM boots WHERE outcome = '{OUTCOME_OK}' AND {column} IS NOT NULL), "
        f"m AS (SELECT *, median(x) OVER ({partition}) AS med FROM b), "
        f"d AS (SELECT *, median(abs(x - med)) OVER ({partition}) AS mad FROM m) "
        f"SELECT {''.join(a + ', ' for a in aliases)}path, boot, host, x, med, mad, "
        f"(x - med) / ({MAD_SCALE} * mad) AS z FROM d WHERE mad > 0 "
        f"AND abs(x - med) / ({MAD_SCALE} * mad) > {float(z_cut)} ORDER BY abs(z) DESC, path, boot"
    ).fetchall()
    n = len(aliases)
    return [
        Outlier(tuple(row[:n]), row[n], int(row[n + 1]), row[n + 2], *(float(v) for v in row[n + 3 : n + 7]))
        for row in rows
    ]


def compare_cohorts(
    view: FleetView,
    metric: str,
    canary: str,
    control: str,
    *,
    cohort_field: str = "cohort",
    strata: str | None = None,
    alpha: float = 0.05,
) -> CohortComparison:
    """Return the shift of ``metric`` in the canary cohort against the control cohort, per stratum
    and pooled (``stats.stratified``; ok boots only), and each cohort's boots by outcome. Raises
    InputError for an unknown field or metric or a cohort with no boots, StatsError when no stratum
    holds both cohorts."""
    column = view.metric(metric)
    cohort = view.field(cohort_field)
    stratum = f"CAST({view.field(strata)} AS VARCHAR)" if strata else "'all'"
    columns = view.con.execute(
        f"SELECT {stratum} AS s, CAST({cohort} AS VARCHAR) AS c, {column} AS x FROM boots "
        f"WHERE outcome = '{OUTCOME_OK}' AND {column} IS NOT NULL AND CAST({cohort} AS VARCHAR) IN (?, ?) "
        "ORDER BY s",
        [canary, control],
    ).fetchnumpy()
    import numpy as np

    s = np.asarray(columns["s"], dtype=object)
    c = np.asarray(columns["c"], dtype=object)
    x = np.asarray(columns["x"], dtype=np.float64)
    for name in (canary, control):
        if not np.any(c == name):
            raise InputError(f"no ok boot of cohort {name!r} ({cohort_field}) with {metric}")
    groups: dict[str, tuple[Any, Any]] = {}
    for name in dict.fromkeys(s.tolist()):
        inside = s == name
        groups[str(name)] = (x[inside & (c == control)], x[inside & (c == canary)])
    result = stratified_shift(groups, alpha)
    of_cohort = f"CAST({cohort} AS VARCHAR) = ?"
    return CohortComparison(
        metric,
        cohort_field,
        canary,
        control,
        strata,
        result,
        alpha,
        canary_counts=view.counts(of_cohort, [canary]),
        control_counts=view.counts(of_cohort, [control]),
    )


def open_view(db: str, parquet: Path | None) -> FleetView:
    """Return the fleet boots of ``db`` as a view, its Parquet copy (in ``parquet``, default beside
    ``db``) brought up to date first. Raises InputError for a database file that does not exist or
    no fleet boot stored, StoreError for a database that cannot be read."""
    from bootscope.store import Store  # sqlalchemy: only when queried
    from bootscope.store.parquet import default_parquet_dir, refresh_parquet

    if "://" not in db and not Path(db).exists():
        raise InputError(f"no database {db} (pass --db)")
    with Store.open(db, create=False) as store:
        snapshot = refresh_parquet(store, parquet or default_parquet_dir(db))
    return FleetView(snapshot)


def split_fields(text: str) -> list[str]:
    """Return the field names of a comma-separated ``--by`` (blanks dropped); raises InputError for
    a field named twice."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if len(set(names)) != len(names):
        raise InputError(f"--by names a field twice: {text}")
    return names


def fleet_summary(db: str, parquet: Path | None, metric: str, by: str) -> FleetSummary:
    """Return :func:`summary` of the fleet in ``db`` grouped by the comma-separated fields ``by``.
    Raises as :func:`open_view`, :func:`split_fields` and :func:`summary` do."""
    view = open_view(db, parquet)
    return summary(view, metric, split_fields(by))


def fleet_outliers(db: str, parquet: Path | None, metric: str, by: str, z_cut: float) -> OutlierList:
    """Return :func:`outliers` of the fleet in ``db`` grouped by the comma-separated fields ``by``.
    Raises InputError for ``z_cut`` not above 0, and as :func:`open_view` and :func:`outliers` do."""
    if not z_cut > 0:
        raise InputError("--z must be above 0")
    fields = split_fields(by)
    view = open_view(db, parquet)
    found = outliers(view, metric, fields, z_cut)
    return OutlierList(metric, tuple(fields), tuple(found), z_cut, view.counts(), tuple(view.notes))


def fleet_compare(
    db: str,
    parquet: Path | None,
    metric: str,
    canary: str,
    control: str,
    *,
    cohort_field: str,
    strata: str | None,
    alpha: float,
) -> CohortComparison:
    """Return :func:`compare_cohorts` on the fleet in ``db``; its ``exit_code`` is the command's.
    Raises InputError for ``alpha`` outside (0, 1) or one cohort named twice, and as
    :func:`open_view` and :func:`compare_cohorts` do."""
    if not 0 < alpha < 1:
        raise InputError("--alpha must lie between 0 and 1")
    if canary == control:
        raise InputError("--canary and --control name the same cohort")
    view = open_view(db, parquet)
    return compare_cohorts(
        view, metric, canary, control, cohort_field=cohort_field, strata=strata, alpha=alpha
    )

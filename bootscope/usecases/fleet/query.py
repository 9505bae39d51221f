"""The fleet queries (``fleet summary``, ``outliers``, ``compare``) on DuckDB over the Parquet copy.

DuckDB does the scanning, grouping, ranking and medians; the statistics that need more than an
order statistic (intervals of quantiles, binomial intervals, the stratified shift) come from
``bootscope.stats``. DuckDB is told never to install or load an extension on its own: this machine
(and many a lab) has no internet, and Parquet support is built into the Python wheel.

Quantiles are order statistics: the p-quantile of n values is the value of rank ceil(p * n) (the
inverse of the empirical distribution function; numpy's ``method="inverted_cdf"``), and its interval
is the pair of order statistics that covers the true quantile with at least 95 % probability,
whatever the distribution (``stats.latency.order_statistic_ranks``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bootscope.errors import InputError
from bootscope.stats.latency import clopper_pearson, order_statistic_ranks
from bootscope.stats.stratified import StratifiedShift, stratified_shift
from bootscope.store.fleet import OUTCOME_FAILED, OUTCOME_OK
from bootscope.store.parquet import FIXED_COLUMNS, META_PREFIX, METRIC_PREFIX, ParquetSnapshot

QUANTILES = (0.5, 0.9, 0.99)
CONFIDENCE = 0.95
MAD_SCALE = 1.4826  # MAD * 1.4826 estimates the standard deviation of normal data
OUTLIER_Z = 3.5  # Iglewicz and Hoaglin's cut for the modified z-score


@dataclass(frozen=True, slots=True)
class QuantileValue:
    """One quantile of a group: p, its value and its distribution-free interval (None: unbounded
    above or too few boots for that confidence), in the metric's unit."""

    p: float
    value: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True, slots=True)
class GroupSummary:
    """One group of a fleet summary: its key values, boots with the metric (n), all boots, the
    quantiles, failed boots and the failure rate's exact binomial interval."""

    key: tuple[str | None, ...]
    n: int
    boots: int
    quantiles: tuple[QuantileValue, ...]
    failed: int
    failed_ci: tuple[float, float] | None


@dataclass(frozen=True, slots=True)
class FleetSummary:
    """``fleet summary``: the metric, the grouping fields and one row per group."""

    metric: str
    by: tuple[str, ...]
    groups: tuple[GroupSummary, ...]
    confidence: float = CONFIDENCE


@dataclass(frozen=True, slots=True)
class Outlier:
    """A boot far from its group: group key, file, boot number, host (if the metadata names one),
    its value, the group's median and MAD, and the modified z-score (value - median) / (1.4826 MAD)."""

    key: tuple[str | None, ...]
    path: str
    boot: int
    host: str | None
    value: float
    median: float
    mad: float
    z: float


@dataclass(frozen=True, slots=True)
class CohortComparison:
    """``fleet compare``: the cohort field, the canary and control cohorts, the strata field (None:
    one stratum) and the stratified shift."""

    metric: str
    cohort_field: str
    canary: str
    control: str
    strata: str | None
    result: StratifiedShift
    alpha: float = 0.05


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
    """The fleet boots of one Parquet snapshot as the DuckDB view ``boots``."""

    def __init__(self, snapshot: ParquetSnapshot) -> None:
        if not snapshot.parts:
            raise InputError("no fleet boots stored yet: run `bootscope fleet import` first")
        self.con = connect()
        files = ", ".join("'" + str(part).replace("'", "''") + "'" for part in snapshot.parts)
        self.con.execute(f"CREATE VIEW boots AS SELECT * FROM read_parquet([{files}], union_by_name = true)")
        self.columns = [row[0] for row in self.con.execute("DESCRIBE boots").fetchall()]

    def field(self, name: str) -> str:
        """Return the quoted column of a metadata field or a fixed column (``kernel_release``,
        ``format``, ``path``, ``outcome``); raises InputError naming the fields there are."""
        if name in FIXED_COLUMNS:
            return _quote(name)
        if META_PREFIX + name in self.columns:
            return _quote(META_PREFIX + name)
        known = sorted(c[len(META_PREFIX) :] for c in self.columns if c.startswith(META_PREFIX))
        raise InputError(
            f"no field {name!r} in the fleet; fields: {', '.join([*known, 'kernel_release', 'format'])}"
        )

    def metric(self, name: str) -> str:
        """Return the quoted column of a metric; raises InputError naming the metrics stored."""
        if METRIC_PREFIX + name in self.columns:
            return _quote(METRIC_PREFIX + name)
        known = sorted(c[len(METRIC_PREFIX) :] for c in self.columns if c.startswith(METRIC_PREFIX))
        raise InputError(f"no metric {name!r} in the fleet; stored: {', '.join(known) or 'none'}")


def _keys(view: FleetView, by: Sequence[str]) -> tuple[str, list[str]]:
    aliases = [f"g{i}" for i in range(len(by))]
    select = ", ".join(
        f"CAST({view.field(name)} AS VARCHAR) AS {alias}" for name, alias in zip(by, aliases, strict=True)
    )
    return select, aliases


def summary(view: FleetView, metric: str, by: Sequence[str]) -> FleetSummary:
    """Return per group (``by`` fields; none: one group) the boots, n with the metric, p50/p90/p99
    with distribution-free intervals and failures with an exact binomial interval. Raises InputError
    for an unknown field or metric."""
    column = view.metric(metric)
    keys, aliases = _keys(view, by)
    base = f"SELECT {keys + ', ' if keys else ''}outcome, {column} AS x FROM boots"
    group = ", ".join(aliases)
    counts = view.con.execute(
        f"SELECT {group + ', ' if group else ''}count(*) AS boots, "
        f"count(*) FILTER (outcome = '{OUTCOME_FAILED}') AS failed, "
        f"count(x) FILTER (outcome = '{OUTCOME_OK}') AS n FROM ({base}) "
        f"{'GROUP BY ' + group if group else ''} ORDER BY {group or 'boots'}"
    ).fetchall()
    wanted: list[tuple[Any, ...]] = []
    plans = []
    for row in counts:
        key, boots, failed, n = tuple(row[: len(aliases)]), int(row[-3]), int(row[-2]), int(row[-1])
        ranks = []
        for p in QUANTILES:
            if n == 0:
                ranks.append((0, 0, 0))
                continue
            low, high = order_statistic_ranks(n, p, CONFIDENCE)
            ranks.append((max(1, math.ceil(p * n)), low, high if high <= n else 0))
        plans.append((key, boots, failed, n, ranks))
        wanted.extend((*key, r) for triple in ranks for r in triple if r > 0)
    values = _ranked_values(view, base, aliases, wanted)
    groups = []
    for key, boots, failed, n, ranks in plans:
        quantiles = tuple(
            QuantileValue(p, values.get((*key, point)), values.get((*key, low)), values.get((*key, high)))
            for p, (point, low, high) in zip(QUANTILES, ranks, strict=True)
        )
        failed_ci = clopper_pearson(failed, boots, CONFIDENCE) if boots else None
        groups.append(GroupSummary(key, n, boots, quantiles, failed, failed_ci))
    return FleetSummary(metric, tuple(by), tuple(groups))


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
    and pooled (``stats.stratified``). Raises InputError for an unknown field or metric or a cohort
    with no boots, StatsError when no stratum holds both cohorts."""
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
    return CohortComparison(metric, cohort_field, canary, control, strata, result, alpha)

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
from pathlib import Path
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
SLOWER = "slower"
EXIT_SLOWER = 1


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

    @property
    def pooled_verdict(self) -> str:
        """Return the pooled shift's verdict (see :func:`verdict`)."""
        return verdict(*(self.result.ci or (None, None)))

    @property
    def stratum_verdicts(self) -> tuple[str, ...]:
        """Return each stratum's verdict, in the strata's order: judged after Holm's correction over
        the strata (``no difference`` when its Holm p is not below alpha and it has an interval)."""
        return tuple(
            verdict(*(s.ci or (None, None))) if s.p_holm < self.alpha or s.ci is None else "no difference"
            for s in self.result.strata
        )

    @property
    def exit_code(self) -> int:
        """Return ``fleet compare``'s exit code: 1 when the canary is slower, pooled or in a stratum."""
        return EXIT_SLOWER if SLOWER in (self.pooled_verdict, *self.stratum_verdicts) else 0


@dataclass(frozen=True, slots=True)
class OutlierList:
    """``fleet outliers``: the metric, the grouping fields, the boots found and the z cut."""

    metric: str
    by: tuple[str, ...]
    found: tuple[Outlier, ...]
    z_cut: float


def verdict(low: float | None, high: float | None) -> str:
    """Return ``slower``, ``faster`` or ``no difference`` for an interval of canary - control
    (lower is better for every boot metric); ``too few boots`` without an interval."""
    if low is None or high is None:
        return "too few boots"
    if low > 0:
        return SLOWER
    if high < 0:
        return "faster"
    return "no difference"


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


def open_view(db: str, parquet: Path | None) -> FleetView:
    """Return the fleet boots of ``db`` as a view, its Parquet copy (in ``parquet``, default beside
    ``db``) brought up to date first. Raises InputError for a database file that does not exist or
    no fleet boot stored, StoreError for a database that cannot be read."""
    from bootscope.store import Store  # sqlalchemy: only when queried
    from bootscope.store.parquet import default_parquet_dir, refresh_parquet

    if "://" not in db and not Path(db).exists():
        raise InputError(f"no database {db} (pass --db)")
    with Store.open(db) as store:
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
    found = outliers(open_view(db, parquet), metric, fields, z_cut)
    return OutlierList(metric, tuple(fields), tuple(found), z_cut)


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

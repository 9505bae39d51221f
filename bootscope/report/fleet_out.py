"""The fleet commands' output: an import's tally, summary, outliers and cohort comparison, each as a
terminal table and as a JSON document.

Summary JSON: ``{"metric", "unit", "by", "confidence", "groups": [{<each by field>, "n", "boots",
"p50", "p50_ci", "p90", "p90_ci", "p99", "p99_ci", "failed", "failed_rate", "failed_ci"}]}``; an
interval is ``[low, high]`` with null for an end the data cannot bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bootscope.metrics import unit_of

if TYPE_CHECKING:  # the results' types only: report never calls into the lab
    from bootscope.usecases.fleet.importer import ImportReport
    from bootscope.usecases.fleet.query import CohortComparison, FleetSummary, Outlier

MAX_BAD_SHOWN = 20


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _ci(low: float | None, high: float | None) -> str:
    if low is None and high is None:
        return ""
    return f"[{_num(low)}, {'inf' if high is None else _num(high)}]"


def render_import(report: ImportReport, out: Console) -> None:
    """Print an import's tally and its bad files (the first MAX_BAD_SHOWN)."""
    out.print(
        f"{report.files} file(s): {report.imported} imported ({report.boots} boot(s)), "
        f"{report.already_stored} already stored, {len(report.bad)} bad, in {report.elapsed_s:.1f} s"
    )
    if report.without_meta:
        out.print(f"{report.without_meta} file(s) have no row in the metadata CSV")
    for path, reason in report.bad[:MAX_BAD_SHOWN]:
        out.print(f"  bad: {escape(path)}: {escape(reason)}", soft_wrap=True)
    if len(report.bad) > MAX_BAD_SHOWN:
        out.print(f"  ... and {len(report.bad) - MAX_BAD_SHOWN} more bad (--format json lists all)")


def import_json(report: ImportReport) -> dict[str, Any]:
    """Return an import's tally as a JSON-able dict (every bad file listed)."""
    return {
        "files": report.files,
        "imported": report.imported,
        "already_stored": report.already_stored,
        "boots": report.boots,
        "bad": [{"file": path, "reason": reason} for path, reason in report.bad],
        "without_meta": report.without_meta,
        "elapsed_s": report.elapsed_s,
    }


def summary_json(result: FleetSummary) -> dict[str, Any]:
    """Return a fleet summary as the documented JSON-able dict."""
    groups = []
    for group in result.groups:
        row: dict[str, Any] = dict(zip(result.by, group.key, strict=True))
        row.update(n=group.n, boots=group.boots)
        for q in group.quantiles:
            name = f"p{round(q.p * 100)}"
            row[name] = q.value
            row[name + "_ci"] = [q.low, q.high]
        row["failed"] = group.failed
        row["failed_rate"] = group.failed / group.boots if group.boots else None
        row["failed_ci"] = list(group.failed_ci) if group.failed_ci else None
        groups.append(row)
    return {
        "metric": result.metric,
        "unit": unit_of(result.metric),
        "by": list(result.by),
        "confidence": result.confidence,
        "groups": groups,
    }


def render_summary(result: FleetSummary, out: Console) -> None:
    """Print a fleet summary: one row per group, quantiles with their intervals, failures."""
    unit = unit_of(result.metric)
    table = Table(title=f"{result.metric} ({unit}), {result.confidence:.0%} distribution-free intervals")
    for name in result.by:
        table.add_column(escape(name))
    for column in ("n", "boots", "p50", "p90", "p99", "failed"):
        table.add_column(column, justify="right")
    for group in result.groups:
        cells = [escape("-" if value is None else str(value)) for value in group.key]
        cells += [str(group.n), str(group.boots)]
        cells += [f"{_num(q.value)} {_ci(q.low, q.high)}" for q in group.quantiles]
        rate = _ci(*group.failed_ci) if group.failed_ci else ""
        cells.append(f"{group.failed} {rate}")
        table.add_row(*cells)
    out.print(table)


def outliers_json(metric: str, by: tuple[str, ...], found: Sequence[Outlier], z_cut: float) -> dict[str, Any]:
    """Return the outliers as a JSON-able dict: ``{"metric", "by", "z_cut", "outliers": [...]}``."""
    return {
        "metric": metric,
        "unit": unit_of(metric),
        "by": list(by),
        "z_cut": z_cut,
        "outliers": [
            {
                **dict(zip(by, o.key, strict=True)),
                "file": o.path,
                "boot": o.boot,
                "host": o.host,
                "value": o.value,
                "median": o.median,
                "mad": o.mad,
                "z": o.z,
            }
            for o in found
        ],
    }


def render_outliers(
    metric: str, by: tuple[str, ...], found: Sequence[Outlier], z_cut: float, out: Console
) -> None:
    """Print the outliers, most extreme first."""
    if not found:
        out.print(f"no boot's {metric} is more than {z_cut:g} robust z from its group's median")
        return
    table = Table(title=f"{metric}: boots beyond |z| > {z_cut:g} (z = (x - median) / (1.4826 MAD))")
    for name in (*by, "host", "file", "boot", "value", "median", "MAD", "z"):
        table.add_column(escape(name))
    for o in found:
        keys = [escape("-" if v is None else str(v)) for v in o.key]
        table.add_row(
            *keys,
            escape(o.host or "-"),
            escape(o.path),
            str(o.boot),
            _num(o.value),
            _num(o.median),
            _num(o.mad),
            f"{o.z:+.1f}",
        )
    out.print(table)


def compare_json(result: CohortComparison) -> dict[str, Any]:
    """Return a cohort comparison as a JSON-able dict (shifts canary - control, metric's unit)."""
    shift = result.result
    return {
        "metric": result.metric,
        "unit": unit_of(result.metric),
        "cohort_field": result.cohort_field,
        "canary": result.canary,
        "control": result.control,
        "strata": result.strata,
        "pooled": {
            "method": "van Elteren",
            "shift": shift.shift,
            "ci": list(shift.ci) if shift.ci else None,
            "z": shift.z,
            "p": shift.p_value,
            "verdict": result.pooled_verdict,
        },
        "by_stratum": [
            {
                "stratum": s.stratum,
                "n_control": s.n_control,
                "n_canary": s.n_canary,
                "shift": s.shift,
                "ci": list(s.ci) if s.ci else None,
                "p": s.p_value,
                "p_holm": s.p_holm,
                "method": s.method,
                "verdict": stratum_verdict,
            }
            for s, stratum_verdict in zip(shift.strata, result.stratum_verdicts, strict=True)
        ],
    }


def render_compare(result: CohortComparison, out: Console) -> None:
    """Print a cohort comparison: per stratum and pooled shift with interval and verdict."""
    document = compare_json(result)
    unit = document["unit"]
    title = f"{result.metric}: {result.canary} - {result.control} ({result.cohort_field})"
    table = Table(title=escape(title))
    for column in (
        result.strata or "stratum",
        "n control",
        "n canary",
        f"shift ({unit})",
        "95% CI",
        "p (Holm)",
        "verdict",
    ):
        table.add_column(escape(column))
    for row in document["by_stratum"]:
        ci = row["ci"] or (None, None)
        table.add_row(
            escape(str(row["stratum"])),
            str(row["n_control"]),
            str(row["n_canary"]),
            _num(row["shift"]),
            _ci(*ci),
            f"{row['p_holm']:.3g}",
            row["verdict"],
        )
    pooled = document["pooled"]
    ci = pooled["ci"] or (None, None)
    table.add_row(
        "pooled (van Elteren)",
        "",
        "",
        _num(pooled["shift"]),
        _ci(*ci),
        f"{pooled['p']:.3g}",
        pooled["verdict"],
    )
    out.print(table)

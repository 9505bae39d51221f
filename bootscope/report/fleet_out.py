"""The fleet commands' output: an import's tally, summary, outliers and cohort comparison, each as a
terminal table and as a JSON document. The tables fit 80 columns (an interval goes under its value).

Outcomes (``usecases/fleet/results.py``): ``failed`` boots died or hung (a panic, oops, BUG or hang
line) or a run said they failed; ``incomplete`` boots have a log that stops before the kernel ran
init without a failure; ``not_run`` boots a device farm did not run. The failure rate is failed /
(ok + failed): incomplete and not-run boots enter no rate. Every output counts them apart.

Summary JSON: ``{"metric", "unit", "by", "confidence", "definitions", "notes", "groups": [{<each by
field>, "n", "boots", "ok", "failed", "incomplete", "not_run", "p50", "p50_ci", "p90", "p90_ci",
"p99", "p99_ci", "failed_rate", "failed_ci"}]}``; ``n`` counts the ok boots with the metric, an
interval is ``[low, high]`` with null for an end the data cannot bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bootscope.metrics import SYSTEMD_USERSPACE_S, unit_of

if TYPE_CHECKING:  # the results' types only: report never calls into the lab
    from bootscope.usecases.fleet.importer import ImportReport
    from bootscope.usecases.fleet.results import (
        CohortComparison,
        FleetSummary,
        OutcomeCounts,
        OutlierList,
    )

MAX_BAD_SHOWN = 20
DEFINITIONS = {
    "failed": "a panic, oops, BUG or hang line (an oops, BUG or hang before the kernel ran init),"
    " or a run that says it failed (KCIDB FAIL, ERROR)",
    "incomplete": "the log stops before the kernel ran init ('Run /init', or 'Freeing unused kernel"
    " memory' where no such line is printed) and shows no failure: cut short; in no failure rate",
    "failed_rate": "failed / (ok + failed), with its exact (Clopper-Pearson) interval",
}


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _ci(low: float | None, high: float | None) -> str:
    if low is None and high is None:
        return ""
    return f"[{_num(low)}, {'inf' if high is None else _num(high)}]"


def _short_ci(low: float | None, high: float | None) -> str:
    """An interval in 3 significant digits: it goes under its value, in a table fitted to 80 columns."""
    if low is None and high is None:
        return ""
    shown = ["-" if low is None else f"{low:.3g}", "inf" if high is None else f"{high:.3g}"]
    return f"[{shown[0]}, {shown[1]}]"


def _pct(fraction: float) -> str:
    value = 100 * fraction
    if value == 0 or value >= 10:
        return f"{value:.0f}%"
    return f"{value:.1f}%" if value >= 1 else f"{value:.2g}%"


def _counts_text(counts: OutcomeCounts) -> str:
    parts = [f"{counts.ok} ok", f"{counts.failed} failed", f"{counts.incomplete} incomplete"]
    if counts.not_run:
        parts.append(f"{counts.not_run} not run")
    return ", ".join(parts)


def counts_json(counts: OutcomeCounts) -> dict[str, int]:
    """Return boots by outcome as a JSON-able dict: ``{"ok", "failed", "incomplete", "not_run"}``."""
    return {
        "ok": counts.ok,
        "failed": counts.failed,
        "incomplete": counts.incomplete,
        "not_run": counts.not_run,
    }


def render_import(report: ImportReport, out: Console) -> None:
    """Print an import's tally (boots by outcome, systemd-analyze pastes) and its bad files (the
    first MAX_BAD_SHOWN)."""
    out.print(
        f"{report.files} file(s): {report.imported} imported ({report.boots} boot(s)), "
        f"{report.already_stored} already stored, {len(report.bad)} bad, in {report.elapsed_s:.1f} s"
    )
    if report.imported:
        out.print(f"imported boots: {_counts_text(report.counts)}")
    if report.systemd_pastes:
        out.print(
            f"{report.systemd_pastes} file(s) of systemd-analyze output: userspace timings only"
            f" ({SYSTEMD_USERSPACE_S}, unit:NAME)"
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
        "outcomes": counts_json(report.counts),
        "systemd_pastes": report.systemd_pastes,
        "bad": [{"file": path, "reason": reason} for path, reason in report.bad],
        "without_meta": report.without_meta,
        "elapsed_s": report.elapsed_s,
    }


def summary_json(result: FleetSummary) -> dict[str, Any]:
    """Return a fleet summary as the documented JSON-able dict."""
    groups = []
    for group in result.groups:
        row: dict[str, Any] = dict(zip(result.by, group.key, strict=True))
        row.update(n=group.n, boots=group.boots, **counts_json(group.counts))
        for q in group.quantiles:
            name = f"p{round(q.p * 100)}"
            row[name] = q.value
            row[name + "_ci"] = [q.low, q.high]
        row["failed_rate"] = group.failed_rate
        row["failed_ci"] = list(group.failed_ci) if group.failed_ci else None
        groups.append(row)
    return {
        "metric": result.metric,
        "unit": unit_of(result.metric),
        "by": list(result.by),
        "confidence": result.confidence,
        "definitions": DEFINITIONS,
        "notes": list(result.notes),
        "groups": groups,
    }


def _key_cells(key: Sequence[str | None]) -> list[str]:
    return [escape("-" if value is None else str(value)) for value in key]


def _add_key_columns(table: Table, by: Sequence[str]) -> None:
    for name in by:
        table.add_column(escape(name), overflow="fold")


def render_summary(result: FleetSummary, out: Console) -> None:
    """Print a fleet summary: the quantiles of ok boots with their intervals (under each value),
    then the boots by outcome with the failure rate, the definitions and any notes."""
    unit = unit_of(result.metric)
    # the titles are lines of their own (a table's title is wrapped to the table's width)
    out.print(f"{result.metric} ({unit}) of ok boots, {result.confidence:.0%} distribution-free intervals")
    times = Table()
    _add_key_columns(times, result.by)
    for column in ("n", "p50", "p90", "p99"):
        times.add_column(column, justify="right", no_wrap=True)
    for group in result.groups:
        cells = [str(group.n)]
        cells += [f"{_num(q.value)}\n{_short_ci(q.low, q.high)}".rstrip() for q in group.quantiles]
        times.add_row(*_key_cells(group.key), *cells)
    out.print(times)
    not_run = any(group.counts.not_run for group in result.groups)
    out.print(f"boots by outcome; failure rate = failed / (ok + failed), {result.confidence:.0%} CI")
    outcomes = Table()
    _add_key_columns(outcomes, result.by)
    for column in ("boots", "ok", "failed", "failure rate", "incomplete", *(["not run"] if not_run else [])):
        outcomes.add_column(column, justify="right", no_wrap=True)
    for group in result.groups:
        rate = group.failed_rate
        ci = group.failed_ci
        rate_cell = "-" if rate is None else _pct(rate) + (f"\n[{_pct(ci[0])}, {_pct(ci[1])}]" if ci else "")
        cells = [str(group.boots), str(group.counts.ok), str(group.failed), rate_cell]
        cells.append(str(group.counts.incomplete))
        if not_run:
            cells.append(str(group.counts.not_run))
        outcomes.add_row(*_key_cells(group.key), *cells)
    out.print(outcomes)
    out.print(f"failed: {DEFINITIONS['failed']}.")
    out.print(f"incomplete: {DEFINITIONS['incomplete']}.")
    for note in result.notes:
        out.print(f"note: {escape(note)}")


def outliers_json(result: OutlierList) -> dict[str, Any]:
    """Return the outliers as a JSON-able dict: ``{"metric", "unit", "by", "z_cut", "boots" (the
    fleet's boots by outcome: only ok ones are judged), "definitions", "notes", "outliers": [...]}``."""
    by = result.by
    return {
        "metric": result.metric,
        "unit": unit_of(result.metric),
        "by": list(by),
        "z_cut": result.z_cut,
        "boots": counts_json(result.counts),
        "definitions": DEFINITIONS,
        "notes": list(result.notes),
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
            for o in result.found
        ],
    }


def render_outliers(result: OutlierList, out: Console) -> None:
    """Print the outliers, most extreme first, then which boots were judged (ok ones) and which not."""
    metric, z_cut = result.metric, result.z_cut
    if not result.found:
        out.print(f"no boot's {metric} is more than {z_cut:g} robust z from its group's median")
    else:
        table = Table(title=f"{metric}: boots beyond |z| > {z_cut:g} (z = (x - median) / (1.4826 MAD))")
        _add_key_columns(table, result.by)
        table.add_column("host", overflow="fold")
        table.add_column("file", overflow="fold")
        for name in ("boot", "value", "median", "MAD", "z"):
            table.add_column(name, justify="right", no_wrap=True)
        for o in result.found:
            table.add_row(
                *_key_cells(o.key),
                escape(o.host or "-"),
                escape(o.path),
                str(o.boot),
                _num(o.value),
                _num(o.median),
                _num(o.mad),
                f"{o.z:+.1f}",
            )
        out.print(table)
    counts = result.counts
    not_run = f", {counts.not_run} not run" if counts.not_run else ""
    out.print(
        f"judged: the ok boots with {metric} (of {counts.ok} ok); not judged: {counts.failed} failed,"
        f" {counts.incomplete} incomplete (cut short){not_run}"
    )
    for note in result.notes:
        out.print(f"note: {escape(note)}")


def compare_json(result: CohortComparison) -> dict[str, Any]:
    """Return a cohort comparison as a JSON-able dict (shifts canary - control, metric's unit; the
    ok boots are compared, and ``boots`` counts each cohort's boots by outcome)."""
    shift = result.result
    return {
        "metric": result.metric,
        "unit": unit_of(result.metric),
        "cohort_field": result.cohort_field,
        "canary": result.canary,
        "control": result.control,
        "strata": result.strata,
        "boots": {
            "canary": counts_json(result.canary_counts),
            "control": counts_json(result.control_counts),
        },
        "definitions": DEFINITIONS,
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
    """Print a cohort comparison: per stratum and pooled shift with its interval (under it) and
    verdict, then each cohort's boots by outcome (the ok boots are compared). Fits 80 columns."""
    document = compare_json(result)
    unit = document["unit"]
    out.print(
        escape(f"{result.metric}: {result.canary} - {result.control} ({result.cohort_field})")
        + "; n: control / canary; pooled: van Elteren"
    )
    table = Table()
    table.add_column(escape(result.strata or "stratum"), overflow="fold")
    table.add_column("n", justify="right", no_wrap=True)
    table.add_column(f"shift ({unit}), {1 - result.alpha:.0%} CI", justify="right", no_wrap=True)
    table.add_column("p (Holm)", justify="right", no_wrap=True)
    table.add_column("verdict")
    for row in document["by_stratum"]:
        ci = row["ci"] or (None, None)
        table.add_row(
            escape(str(row["stratum"])),
            f"{row['n_control']} / {row['n_canary']}",
            f"{_num(row['shift'])}\n{_short_ci(*ci)}".rstrip(),
            f"{row['p_holm']:.3g}",
            row["verdict"],
        )
    pooled = document["pooled"]
    ci = pooled["ci"] or (None, None)
    table.add_row(
        "pooled",
        "",
        f"{_num(pooled['shift'])}\n{_short_ci(*ci)}".rstrip(),
        f"{pooled['p']:.3g}",
        pooled["verdict"],
    )
    out.print(table)
    for name, counts in ((result.canary, result.canary_counts), (result.control, result.control_counts)):
        out.print(f"{escape(name)}: {_counts_text(counts)}; the ok boots are compared")

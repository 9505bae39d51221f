"""A latency experiment's result as a terminal table, JSON or mail text. Rendering only."""

from __future__ import annotations

import json
import statistics
import textwrap
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bootscope.report.compare_out import comparison_dict, interval, num
from bootscope.report.mail import to_mail
from bootscope.report.text_table import Column, TextTable, drop_to_fit, lay_out, left_out_line, paragraph

if TYPE_CHECKING:
    from bootscope.usecases.latency import LatencyRunsResult, RunTail, VariantTails

STATS = ("p99.9", "p99.99", "max")


def _median(variant: VariantTails, statistic: str) -> str:
    values = variant.values(statistic)
    return "n/a" if not values else num(statistics.median(values))


def _facts(variant: VariantTails, key: str) -> str:
    seen = sorted({run.facts.get(key, "") for run in variant.runs if run.facts.get(key)})
    return " | ".join(seen) or "-"


def _where(run: RunTail, by_worker: bool) -> str:
    """Where ``run`` was measured: its host, or its Dask worker when one host had several."""
    key = "worker" if by_worker else "host"
    return str(run.placement.get(key) or run.placement.get("host") or "unknown")


def _measured_on(result: LatencyRunsResult) -> dict[str, str]:
    """Per variant, the hosts (or, all on one host, the Dask workers) that measured its runs, with
    their run counts; empty when one place measured everything (the table then has no such column)."""
    runs = [run for variant in result.variants for run in variant.runs]
    hosts = {_where(run, False) for run in runs}
    by_worker = len(hosts) == 1 and len({_where(run, True) for run in runs}) > 1
    if len(hosts) < 2 and not by_worker:
        return {}
    measured = {}
    for variant in result.variants:
        counts = Counter(_where(run, by_worker) for run in variant.runs)
        measured[variant.name] = " | ".join(f"{place} ({n})" for place, n in sorted(counts.items()))
    return measured


# Left out, in this order, when the terminal is too narrow for every number of the variants' table.
_DROPPABLE = ("overflow", "runs")


def _shared_facts(result: LatencyRunsResult) -> tuple[list[str], str]:
    """The fact columns (kernel, preempt) whose value differs between variants, and a line that says
    the values every variant shares ('' when none is shared)."""
    columns, shared = [], []
    for key, header in (("kernel_release", "kernel"), ("preemption", "preempt")):
        values = {_facts(variant, key) for variant in result.variants}
        if len(values) == 1:
            shared.append(f"{header} {values.pop()}")
        else:
            columns.append(header)
    return columns, f"every variant: {', '.join(shared)}" if shared else ""


def _variants_table(result: LatencyRunsResult, fact_columns: Sequence[str]) -> TextTable:
    measured_on = _measured_on(result)
    headers = ["variant", "runs", "ok", *STATS, "overflow", *fact_columns]
    if measured_on:
        headers.append("measured on (runs)")
    numbers = {"runs", "ok", *STATS, "overflow"}
    table = TextTable(
        tuple(Column(h, right=h in numbers, fold=h not in numbers) for h in headers), boxed=False
    )
    table.add_row(*headers)
    keys = {"kernel": "kernel_release", "preempt": "preemption"}
    for variant in result.variants:
        ok = sum(1 for run in variant.runs if run.outcome == "ok")
        cells = [variant.name, str(len(variant.runs)), str(ok), *(_median(variant, s) for s in STATS)]
        cells += [str(variant.overflow), *(_facts(variant, keys[h]) for h in fact_columns)]
        if measured_on:
            cells.append(measured_on[variant.name])
        table.add_row(*cells)
    return table


def _comparisons_table(comparisons: Sequence[Any]) -> TextTable:
    headers = ("statistic", "runs", "shift us", "CI", "p (Holm)", "verdict")
    table = TextTable(
        tuple(Column(h, right=h in ("runs", "shift us", "p (Holm)"), fold=h == "verdict") for h in headers),
        boxed=False,
    )
    table.add_row(*headers)
    for c in comparisons:
        p = "-" if c.p_adjusted is None else f"{c.p_adjusted:.3g}"
        table.add_row(
            c.metric, f"{c.a.n} vs {c.b.n}", num(c.shift_estimate), interval(c.shift_ci), p, c.verdict
        )
    return table


def latency_runs_text(result: LatencyRunsResult, width_cells: int | None = None) -> str:
    """Return the per-variant table (median over runs of each run's p99.9/p99.99/max, us; the
    kernel and preemption, in a column when variants differ; where the runs were measured when more
    than one host or Dask worker measured them), the comparisons against the baseline with the method
    named, and the warnings. ``width_cells``: every line fits that many terminal cells (text folded,
    low-value columns left out, numbers never cut); None: lines as long as their text."""
    width = width_cells or 1 << 30
    where = "this machine" if result.accel in ("", "none") else f"QEMU {result.accel}"
    fact_columns, shared = _shared_facts(result)
    lines = paragraph(
        f"latency run {result.experiment_id}: {result.tool}, {where}; per variant the median over its runs"
        " of each run's statistic, us",
        width,
    )
    if shared:
        lines += paragraph(shared, width)
    table, dropped = drop_to_fit(_variants_table(result, fact_columns), width, _DROPPABLE)
    lines += lay_out(table, width)
    if dropped:
        lines += paragraph(left_out_line(dropped, width), width)
    lines.append("")
    for name, comparisons in result.comparisons.items():
        lines += paragraph(
            f"{name} against {result.variants[0].name} (each run's statistic one observation;"
            " Hodges-Lehmann shift, Mann-Whitney, Holm over the statistics):",
            width,
        )
        lines += ["  " + line for line in lay_out(_comparisons_table(comparisons), width - 2)]
    notes = []
    for name, ratio in result.exceedance.items():
        high = "inf" if ratio.high is None else f"{ratio.high:.3g}"
        value = "-" if ratio.ratio is None else f"{ratio.ratio:.3g}"
        notes.append(
            f"exceedances above {result.threshold_us} us: {result.variants[0].name} {ratio.k_a}/{ratio.n_a},"
            f" {name} {ratio.k_b}/{ratio.n_b}; rate ratio {value} [{ratio.low:.3g}, {high}]"
            f" (exact conditional), p {ratio.p_value:.3g}"
        )
    for name, fit in result.gev.items():
        levels = "; ".join(
            f"once per {cycles:.0e} cycles {level:.0f} us [{low:.0f}, {high:.0f}]"
            for cycles, (level, low, high) in fit.return_levels.items()
        )
        notes.append(
            f"{name}: GEV of {fit.blocks} run maxima (blocks of {fit.block_cycles} cycles), shape"
            f" {fit.shape_xi:.2f}{' (heavy tail)' if fit.heavy_tail else ''}: {levels}"
        )
    if not result.comparisons and len(result.variants) > 1:
        notes.append("no comparison: too few resolved runs")
    notes += [f"warning: {warning}" for warning in result.warnings]
    for note in notes:
        lines += paragraph(note, width)
    return "\n".join(lines)


def _run_json(run: RunTail) -> dict[str, Any]:
    return {
        "index": run.index,
        "outcome": run.outcome,
        **{f"{name}_us": run.statistics.get(name) for name in STATS},
        "overflow": run.overflow,
        "cycles": run.cycles,
        "histogram_limit_us": run.limit_us,
        "facts": dict(run.facts),
        "interrupts_during": dict(run.interrupts),
        "placement": dict(run.placement),
    }


def latency_runs_json(result: LatencyRunsResult, notes: Sequence[str] = ()) -> str:
    """Return the result as JSON: variants with their runs, comparisons, warnings, and the run's
    ``notes`` (said before it ran: runs too short, timerlat fallbacks, what TCG means)."""
    document = {
        "experiment": result.experiment_id,
        "tool": result.tool,
        "accel": result.accel,
        "variants": [
            {"name": v.name, "runs": [_run_json(run) for run in v.runs], "overflow": v.overflow}
            for v in result.variants
        ],
        "comparisons": {name: [comparison_dict(c) for c in cs] for name, cs in result.comparisons.items()},
        "exceedance_threshold_us": result.threshold_us,
        "exceedance": {
            name: {
                "k_a": r.k_a,
                "n_a": r.n_a,
                "k_b": r.k_b,
                "n_b": r.n_b,
                "rate_ratio": r.ratio,
                "ci_low": r.low,
                "ci_high": r.high,
                "p_value": r.p_value,
                "confidence": r.confidence,
            }
            for name, r in result.exceedance.items()
        },
        "gev": {
            name: {
                "blocks": fit.blocks,
                "block_cycles": fit.block_cycles,
                "shape_xi": fit.shape_xi,
                "loc_us": fit.loc_us,
                "scale_us": fit.scale_us,
                "heavy_tail": fit.heavy_tail,
                "return_levels_us": {str(c): list(v) for c, v in fit.return_levels.items()},
            }
            for name, fit in result.gev.items()
        },
        "warnings": list(result.warnings),
        "notes": list(notes),
    }
    return json.dumps(document, indent=2)


def latency_runs_mail(result: LatencyRunsResult) -> str:
    """Return plain text within 72 columns: the comparisons, then the warnings."""
    parts = [f"Latency run {result.experiment_id} ({result.tool}); each run's p99.9, p99.99 and max"
             " are one observation each (us)."]  # fmt: skip
    for comparisons in result.comparisons.values():
        parts.append(to_mail(list(comparisons), "one value per run, from the run's own histogram"))
    parts += [f"Warning: {w}" for w in result.warnings]
    return "\n\n".join("\n".join(textwrap.wrap(p, 72)) if "\n" not in p else p for p in parts)

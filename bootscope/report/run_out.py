"""How a finished run (boot or kexec) is shown: rich tables for the terminal and one JSON document.

Both read a :class:`bootscope.usecases.summary.RunSummary` and the runner's result; nothing here touches
the store or computes a statistic.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from bootscope.lab.runner import RunResult
from bootscope.metrics import DEFINITIONS, unit_of
from bootscope.report import compare_out
from bootscope.report.rich_fit import drop_to_fit
from bootscope.usecases.run import RunOutcome
from bootscope.usecases.summary import RunSummary

MAX_FAILED_SHOWN = 10


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def run_document(result: RunResult, summary: RunSummary, db: str) -> dict[str, Any]:
    """Return the run as one JSON-able document: status, seed, accelerator, notes, per-variant counts
    and metric spreads, and the comparisons against the first variant."""
    exp = summary.experiment
    return {
        "experiment": exp.id,
        "db": db,
        "status": exp.status,
        "seed": exp.seed,
        "accel": exp.accel,
        "accel_reason": exp.accel_reason,
        "boots_run": result.boots_run,
        "stopped_early": result.stopped_early,
        "until_satisfied": result.until_satisfied,
        "notes": list(result.notes),
        "variants": [
            {
                "name": s.name,
                "ok": s.ok,
                "failed": s.failed,
                "warmup": s.warmup,
                "disturbed": s.disturbed,
                "retried": s.retried,
                "metrics": {
                    name: {"n": m.n, "median": m.median, "min": m.min, "max": m.max}
                    for name, m in s.metrics.items()
                },
            }
            for s in summary.summaries
        ],
        "comparisons": [
            compare_out.comparison_dict(c, DEFINITIONS.get(c.metric, ""))
            for group in summary.comparisons
            for c in group
        ],
    }


def print_run(
    out: Console, result: RunResult, summary: RunSummary, db: str, seed_given: bool, noun: str = "boots"
) -> None:
    """Print the run's counts, metric spreads, comparisons, failures and where it is stored."""
    exp = summary.experiment
    counts = Table(title=Text(f"experiment {exp.id}: {exp.status}"), title_justify="left")
    counts.add_column("variant")
    for heading in ("ok", "failed", "warm-up", "disturbed", "retried"):
        counts.add_column(heading, justify="right", no_wrap=True)
    for item in summary.summaries:
        numbers = (item.ok, item.failed, item.warmup, item.disturbed, item.retried)
        counts.add_row(Text(item.name), *(str(number) for number in numbers))
    out.print(counts)
    metrics = Table(title=Text(f"measured ok {noun}"), title_justify="left")
    for heading in ("metric", "unit", "variant", "n", "median", "min", "max"):
        text = heading in ("metric", "unit", "variant")
        metrics.add_column(heading, justify="left" if text else "right", no_wrap=not text, overflow="fold")
    for metric in summary.metrics:
        for item in summary.summaries:
            spread = item.metrics[metric]
            metrics.add_row(
                metric,
                unit_of(metric),
                Text(item.name),
                str(spread.n),
                _fmt(spread.median),
                _fmt(spread.min),
                _fmt(spread.max),
            )
        metrics.add_section()
    drop_to_fit(metrics, out.width, ("unit",))  # every metric's name ends in its unit
    out.print(metrics)
    for group in summary.comparisons:
        guards = [summary.like_for_like.get(c.b.name) for c in group]
        out.print(compare_out.table(group, DEFINITIONS.get(group[0].metric, ""), guards))
    for note in summary.compare_notes if summary.comparisons else ():
        out.print(Text(f"not compared: {note}"))
    print_failed(out, summary.failed)
    out.print(Text(f"accelerator: {exp.accel} ({exp.accel_reason})"))
    how = "" if seed_given else f" (drawn at random: --seed {exp.seed} repeats this order)"
    out.print(Text(f"seed: {exp.seed}{how}; {noun} run now: {result.boots_run}"))
    if result.until_satisfied:
        how = "before --max-n" if result.stopped_early else "at --max-n"
        out.print(Text(f"--until precise: the samples are precise enough ({how})"))
    elif result.until_satisfied is False:
        out.print(Text("--until precise: not precise enough when --max-n was reached", style="yellow"))
    out.print(Text(f"stored: experiment {exp.id} in {db} (bootscope export {exp.id} --db {db})"))


def show_run(out: Console, outcome: RunOutcome, as_json: bool, noun: str = "boots") -> None:
    """Print a finished run: its JSON document (:func:`run_document`) or its tables
    (:func:`print_run`, ``noun`` naming what was measured)."""
    if as_json:
        out.print_json(json.dumps(run_document(outcome.result, outcome.summary, outcome.db)))
        return
    print_run(out, outcome.result, outcome.summary, outcome.db, seed_given=outcome.seed_given, noun=noun)


def print_failed(out: Console, failed: Sequence[Any]) -> None:
    """Print the first failed records (variant, index, outcome, reason) and how many more there are."""
    for boot in failed[:MAX_FAILED_SHOWN]:
        line = Text(f"  boot {boot.index} ({boot.variant}): ")
        line.append(boot.outcome, style="red")
        line.append(f" {boot.reason}")
        out.print(line)
    if len(failed) > MAX_FAILED_SHOWN:
        out.print(Text(f"  ... and {len(failed) - MAX_FAILED_SHOWN} more failed (bootscope export)"))


def print_notes(out: Console, notes: Sequence[str], label: str = "note") -> None:
    """Print each note on its own line, as plain text."""
    for note in notes:
        out.print(Text(f"{label}: {note}"))

"""How a sweep is shown: its JSON document and its tables (every cell against the baseline cell,
the best cell, and the main effects)."""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.table import Table

from bootscope import metrics
from bootscope.report.console import output_console
from bootscope.report.rich_fit import drop_to_fit
from bootscope.stats.compare import FASTER, SLOWER
from bootscope.usecases.sweep import CellResult, SweepResult


def sweep_json(result: SweepResult) -> dict[str, Any]:
    """Return the JSON-able dict of the issue's shape: run, metric, baseline params, and per cell its
    params, n, median, shift (estimate, ci; metric's unit, cell minus baseline), p (Holm-adjusted
    when several cells), verdict; plus the best cell and the main effects."""
    import numpy as np  # lazily, as the analysis itself

    def cell_entry(item: CellResult) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "params": item.cell.as_dict(),
            "variant": item.cell.name,
            "n": len(item.samples),
            "median": float(np.median(item.samples)),
        }
        comparison = item.comparison
        if comparison is None:
            entry.update({"shift": {"estimate": 0.0, "ci": None}, "p": None, "verdict": "baseline"})
            return entry
        p = comparison.p_adjusted if comparison.p_adjusted is not None else comparison.tests[0].p
        entry.update(
            {
                "shift": {
                    "estimate": comparison.shift_estimate,
                    "ci": list(comparison.shift_ci) if comparison.shift_ci else None,
                    "relative": comparison.shift_relative,
                },
                "p": p,
                "verdict": comparison.verdict,
            }
        )
        return entry

    return {
        "run": result.run,
        "metric": result.metric,
        "unit": result.unit,
        "alpha": result.alpha,
        "baseline": cell_entry(result.baseline),
        "cells": [cell_entry(item) for item in (result.baseline, *result.cells)],
        "best": {"params": result.best.as_dict(), "variant": result.best.name} if result.best else None,
        "main_effects": {
            "dominant": result.effects.dominant,
            "parameters": [
                {
                    "name": effect.name,
                    "spread": effect.spread,
                    "levels": [{"level": lv.level, "n": lv.n, "median": lv.median} for lv in effect.levels],
                }
                for effect in result.effects.parameters
            ],
        },
    }


def _ci(ci: tuple[float, float] | list[float] | None) -> str:
    return f"[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "-"


def _p(p: float | None) -> str:
    return "-" if p is None else f"{p:.3g}"


def print_sweep(data: dict[str, Any], names: list[str]) -> None:
    """Print the sweep document ``data`` (:func:`sweep_json`) as tables on stdout, one column per
    parameter in ``names``: every cell with its shift against the baseline, the best cell, the main
    effects, and the metric's definition."""
    console = output_console()
    table = Table(title=f"sweep: run {data['run']}, {escape(data['metric'])} (s), baseline = first cell")
    for name in names:
        table.add_column(escape(name), overflow="fold")
    for column in ("n", "median", "shift", "95% CI", "p (Holm)", "verdict"):
        number = column not in ("verdict", "95% CI")
        table.add_column(column, justify="right" if column != "verdict" else "left", no_wrap=number)
    for cell in data["cells"]:
        verdict = cell["verdict"]
        style = {FASTER: "green", SLOWER: "red"}.get(verdict, "")
        shown = f"[{style}]{escape(verdict)}[/{style}]" if style else escape(verdict)
        table.add_row(
            *(escape(cell["params"][name]) for name in names),
            str(cell["n"]),
            f"{cell['median']:.3f}",
            f"{cell['shift']['estimate']:+.3f}",
            _ci(cell["shift"]["ci"]),
            _p(cell["p"]),
            shown,
        )
    drop_to_fit(table, console.width, ("n", "median"))
    console.print(table)
    best = data["best"]
    best_text = ", ".join(f"{k}={v}" for k, v in best["params"].items()) if best else "-"
    console.print(f"best cell: {escape(best_text)}")
    effects = Table(title="main effects: median per level, pooled over the other parameters (s)")
    for column in ("parameter", "levels", "spread"):
        effects.add_column(
            column, justify="right" if column == "spread" else "left", no_wrap=column == "spread"
        )
    for effect in data["main_effects"]["parameters"]:
        levels = "  ".join(f"{lv['level'] or '(none)'}: {lv['median']:.3f}" for lv in effect["levels"])
        effects.add_row(escape(effect["name"]), escape(levels), f"{effect['spread']:.3f}")
    console.print(effects)
    dominant = data["main_effects"]["dominant"]
    console.print(f"moves {escape(data['metric'])} most: {escape(dominant or '-')}")
    console.print(f"{escape(data['metric'])}: {escape(metrics.definition(data['metric']).definition)}")

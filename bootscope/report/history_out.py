"""How a history is shown: its JSON document, its table (each position with its median, the change
points between them), the lines that name each step, the ``--by`` diffs, and its picture."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from bootscope import metrics
from bootscope.report.console import output_console
from bootscope.report.rich_fit import drop_to_fit
from bootscope.usecases.history import HistoryOutcome, HistoryResult

# How many components each --by diff lists: in the JSON document, and in the terminal's table.
EXPLAINED_TOP_JSON = 10
EXPLAINED_TOP_TABLE = 5


def history_json(result: HistoryResult) -> dict[str, Any]:
    """Return the JSON-able document of a history: per position its name, kernel, n, median and the
    median's 95 % interval (metric's unit); per change point the positions it lies between, the
    shift with its interval, the relative shift and the raw and adjusted p; the method and alpha."""
    return {
        "run": result.run,
        "metric": result.metric,
        "unit": result.unit,
        "positions": [
            {
                "name": p.name,
                "kernel": p.kernel,
                "n": p.n,
                "median": p.median,
                "median_ci": list(p.median_ci) if p.median_ci else None,
            }
            for p in result.positions
        ],
        "change_points": [
            {
                "after": c.index,
                "between": [result.positions[c.index].name, result.positions[c.index + 1].name],
                "shift": {"estimate": c.shift, "ci": list(c.shift_ci) if c.shift_ci else None},
                "relative": c.shift_relative,
                "p": c.p,
                "p_adjusted": c.p_adjusted,
            }
            for c in result.change_points.change_points
        ],
        "method": result.change_points.method,
        "alpha": result.change_points.alpha,
    }


def history_document(outcome: HistoryOutcome) -> dict[str, Any]:
    """Return the history's JSON-able document (:func:`history_json`), with ``explained_by`` (per
    change point, the diff of the positions around it) when ``--by`` was given, even if empty."""
    data = history_json(outcome.result)
    if outcome.explained is not None:
        from bootscope.report.diff_out import diff_dict

        data["explained_by"] = [
            {"after": step, **diff_dict(diff, EXPLAINED_TOP_JSON)} for step, diff in outcome.explained
        ]
    return data


def write_history_plot(result: HistoryResult, path: Path) -> None:
    """Write the series (every position's samples and median interval, the steps marked) to ``path``
    (.png or .svg). Raises as :func:`bootscope.report.series_plot.plot_series` does."""
    from bootscope.report.series_plot import plot_series

    plot_series(
        [p.name for p in result.positions],
        [p.samples for p in result.positions],
        [(p.median, p.median_ci) for p in result.positions],
        [(c.index, f"{c.shift:+.3f} s, p={c.p_adjusted:.2g}") for c in result.change_points.change_points],
        result.metric,
        path,
    )


def _ci(ci: tuple[float, float] | list[float] | None) -> str:
    return f"[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "-"


def _interval(ci: tuple[float, float] | None) -> str:
    return "-" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def print_history(outcome: HistoryOutcome, alpha: float) -> None:
    """Print the history on stdout: the table of positions with the change points (tested at
    ``alpha``) between them, a line per change point, the ``--by`` diffs, the method and the
    metric's definition."""
    result = outcome.result
    metric = result.metric
    changes = result.change_points.change_points
    console = output_console()
    table = Table(title=f"history: run {result.run}, {escape(metric)} (s)")
    for column in ("#", "version", "kernel", "n", "median", "95% CI of median"):
        number = column in ("#", "n", "median")
        table.add_column(column, justify="right" if number else "left", no_wrap=number, overflow="fold")
    for i, position in enumerate(result.positions):
        table.add_row(
            str(i), escape(position.name), escape(position.kernel), str(position.n),
            f"{position.median:.3f}",
            _interval(position.median_ci),
        )  # fmt: skip
        for change in changes:
            if change.index == i:
                table.add_row(
                    "", f"[bold]^ change: {change.shift:+.3f} s[/bold]", f"CI {_ci(change.shift_ci)}", "",
                    "", f"p = {change.p_adjusted:.3g}",
                )  # fmt: skip
    # the kernel is most often in the version's name; a change's interval is also in its line below
    drop_to_fit(table, console.width, ("kernel",))
    console.print(table)
    if not changes:
        console.print(f"no change point at alpha {alpha} (flat within the noise)")
    for change in changes:
        before, after = result.positions[change.index].name, result.positions[change.index + 1].name
        console.print(
            f"change between {escape(before)} and {escape(after)}: {change.shift:+.3f} s "
            f"{_ci(change.shift_ci)}, p = {change.p_adjusted:.3g} (permutation, adjusted)"
        )
    for _step, diff in outcome.explained or ():
        from bootscope.report.diff_out import table as diff_table

        console.print(diff_table(diff, EXPLAINED_TOP_TABLE))
    console.print(f"method: {escape(result.change_points.method)}")
    console.print(f"{escape(metric)}: {escape(metrics.definition(metric).definition)}")

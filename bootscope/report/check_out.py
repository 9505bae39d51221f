"""``bootscope check`` and ``baseline save`` rendered: the verdict as a table or JSON, the reference
file's text and the line that says what was saved. Nothing here decides; the use case did."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from bootscope.usecases.check import SavedBaseline
    from bootscope.usecases.reference import CheckResult


def check_json(result: CheckResult) -> str:
    """Return the whole verdict as indented JSON text (times in s)."""
    return json.dumps(asdict(result), indent=2)


def render_check(result: CheckResult, console: Console) -> None:
    """Print the verdict: the total's decision (shift with interval against the margin, s), how many
    components were checked, and a table of the regressions."""
    from rich.markup import escape
    from rich.table import Table

    total = result.total
    if total is not None:
        ci = f" [{total.shift_ci[0]:+.4f}, {total.shift_ci[1]:+.4f}]" if total.shift_ci else ""
        console.print(
            f"{escape(result.metric)}: {total.verdict}, shift {total.shift:+.4f} s{ci} against margin "
            f"{total.margin:.4f} s, n = {total.n_candidate} vs {total.n_baseline} reference boots"
        )
    console.print(f"{result.components_checked} components checked")
    if result.regressions:
        table = Table(title="regressions")
        for column in ("kind", "component", "shift (s)", "margin (s)", "q"):
            table.add_column(column)
        for finding in result.regressions:
            d = finding.decision
            table.add_row(
                finding.kind,
                escape(finding.name),
                f"{d.shift:+.4f}" if d else f"new: {finding.new_median_s or 0:.4f}",
                f"{d.margin:.4f}" if d else "-",
                "-" if finding.q_bad is None else f"{finding.q_bad:.3g}",
            )
        console.print(table)


def reference_text(document: Mapping[str, Any]) -> str:
    """Return a reference document as the text of its file (JSON, one space of indent)."""
    return json.dumps(document, indent=1) + "\n"


def saved_line(output: Path, saved: SavedBaseline) -> str:
    """Return the one line that says what ``baseline save`` wrote to ``output``."""
    document = saved.document
    components = sum(len(names) for names in document["components"].values())
    return (
        f"wrote {output}: run {document['source']['run']} variant {saved.variant}, {saved.boots} boots, "
        f"{len(document['metrics'])} metrics, {components} components"
    )

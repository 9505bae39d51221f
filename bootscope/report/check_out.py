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
    from bootscope.usecases.check_rule import CheckResult
    from bootscope.usecases.reference import Reach


def check_json(result: CheckResult) -> str:
    """Return the whole verdict as indented JSON text (times in s)."""
    return json.dumps(asdict(result), indent=2)


def render_check(result: CheckResult, console: Console) -> None:
    """Print the verdict: the total's decision (shift with interval against the margin, s, and the
    threshold when the margin is the reference's resolution), how many components were checked,
    and a table of the regressions; every line fits the console's width."""
    from rich.markup import escape
    from rich.table import Table

    total, found = result.total, result.reach
    if result.not_like_for_like:
        console.print(escape(result.not_like_for_like))
    if total is not None:
        ci = f"  [{total.shift_ci[0]:+.4f}, {total.shift_ci[1]:+.4f}]" if total.shift_ci else ""
        console.print(f"{escape(result.metric)}: {total.verdict}")
        boots = f"{total.n_candidate} new vs {total.n_baseline} reference boots"
        console.print(f"  shift  {total.shift:+.4f} s{ci}  {boots}")
        console.print(f"  margin {total.margin:+.4f} s  {_share(total.margin, found)}")
    if found is not None and found.margin_s > found.threshold_s:
        would = f"{found.boots_for_threshold} would" if found.boots_for_threshold else "no number would"
        console.print(
            f"         ({found.threshold:.1%} asked, {found.threshold_s:.4f} s: "
            f"{found.check_boots} boots resolve no finer; {would})"
        )
    console.print(f"{result.components_checked} components checked")
    if result.regressions:
        table = Table(title="regressions")
        for column, justify in (("kind", "left"), ("component", "left"), ("shift s", "right"),
                                ("margin s", "right"), ("q", "right")):  # fmt: skip
            table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
        for finding in result.regressions:
            d = finding.decision
            table.add_row(
                finding.kind,
                escape(finding.name),
                f"{d.shift:+.4f}" if d else f"new {finding.new_median_s or 0:.4f}",
                f"{d.margin:.4f}" if d else "-",
                "-" if finding.q_bad is None else f"{finding.q_bad:.3g}",
            )
        console.print(table)


def _share(seconds: float, found: Reach | None) -> str:
    if found is None or not found.median_s:
        return ""
    return f"{seconds / abs(found.median_s):.1%} of the reference median {found.median_s:.4f} s"


def reference_text(document: Mapping[str, Any]) -> str:
    """Return a reference document as the text of its file (JSON, one space of indent)."""
    return json.dumps(document, indent=1) + "\n"


def saved_text(output: Path, saved: SavedBaseline) -> str:
    """Return the lines that say what ``baseline save`` wrote to ``output`` and what the reference
    can prove for its metric (each line under 80 columns for a usual path)."""
    document = saved.document
    components = sum(len(names) for names in document["components"].values())
    lines = [
        f"wrote {output}: {saved.source}, {saved.boots} boots, {len(document['metrics'])} metrics, "
        f"{components} components"
    ]
    found = saved.reach
    if found is None:
        lines.append(f"{saved.metric}: fewer than 2 boots reached it; a check of it cannot decide")
        return "\n".join(lines)
    lines.append(f"{found.metric}: median {found.median_s:.4f} s over {found.boots} boots")
    if found.resolution_s is None or found.catches_s is None:
        lines.append(f"  a check of {found.check_boots} boots cannot prove anything at alpha {found.alpha:g}")
    else:
        lines.append(f"  a check of {found.check_boots} boots, {found.power:.0%} of the time,")
        lines.append(
            f"  passes an unchanged kernel (margin {found.margin_s:.4f} s, "
            f"{found.margin_s / abs(found.median_s):.1%})"
        )
        lines.append(
            f"  and catches a slowdown of {found.catches_s:.4f} s "
            f"({found.catches_s / abs(found.median_s):.1%})"
        )
    wanted = f"--threshold {found.threshold:.1%} ({found.threshold_s:.4f} s)"
    if found.boots_for_threshold is None:
        lines.append(f"  {wanted}: no number of boots resolves it; save more boots")
    else:
        lines.append(f"  {wanted}: a check of {found.boots_for_threshold} boots resolves it")
    return "\n".join(lines)

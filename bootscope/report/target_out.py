"""``bootscope target check``'s outputs: a table of checks, or one JSON document."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.table import Table

    from bootscope.usecases.target import TargetCheck


def target_document(checked: TargetCheck) -> dict[str, Any]:
    """Return the checks as one JSON-able document (the target, then each check's fields)."""
    return {
        "target": checked.url,
        "checks": [
            {"name": c.name, "status": c.status, "found": c.found, "advice": c.advice} for c in checked.checks
        ],
    }


def target_table(checked: TargetCheck) -> Table:
    """Return the checks as a rich table: check, status, what was found, what to change and why."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=f"target {escape(checked.url)}", title_justify="left")
    for column in ("check", "status", "found", "what to change and why"):
        table.add_column(column, overflow="fold")
    for c in checked.checks:
        table.add_row(escape(c.name), c.status, escape(c.found), escape(c.advice))
    return table

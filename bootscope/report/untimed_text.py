"""Text and JSON for a log that cannot be timed: what its text still says
(``parse.untimed.UntimedFacts``)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from bootscope.parse.untimed import UntimedFacts
from bootscope.report.json_out import bootstage_json
from bootscope.report.text_prekernel import bootstage_lines


def render_untimed(facts: UntimedFacts, console: Console, top_n: int, title: str = "") -> None:
    """Print the release, command line, CPU count and the ``top_n`` slowest initcalls of ``facts``.

    Log text goes through ``Text`` so that it is never read as markup. Raises nothing.
    """
    said = "not in this log"
    console.rule(Text(f"{title} (no timestamps)"), style="bold")
    console.print(Text(f"release  {facts.release or said}"))
    console.print(Text(f"cmdline  {facts.cmdline if facts.cmdline is not None else said}"))
    console.print(Text(f"cpus     {facts.cpus if facts.cpus is not None else said}"))
    if facts.bootstage is not None:
        for line in bootstage_lines(facts.bootstage, top_n):
            console.print(Text(line))
    if not facts.initcalls:
        console.print(Text("initcalls: none reported their duration"))
        return
    total_us = sum(call.duration_us for call in facts.initcalls)
    console.print(
        Text(f"initcalls: {len(facts.initcalls)} reported {total_us / 1e6:.3f} s in all (their own text)")
    )
    slowest = sorted(facts.initcalls, key=lambda call: call.duration_us, reverse=True)[:top_n]
    for call in slowest:
        console.print(Text(f"  {call.duration_us / 1e3:10.3f} ms  {call.name}"))


def untimed_json(facts: UntimedFacts, path: str, reason: str) -> dict[str, Any]:
    """Return the JSON document of an untimed log: ``timed`` false, ``reason`` (why no time can be
    given), what the text says (None where it did not say) and every initcall that printed its own
    duration, slowest first (``duration_us`` is the kernel's text, not a timestamp difference)."""
    calls = sorted(facts.initcalls, key=lambda call: call.duration_us, reverse=True)
    return {
        "log": path,
        "format": "untimed",
        "timed": False,
        "reason": reason,
        "identity": {"release": facts.release, "cmdline": facts.cmdline, "cpus": facts.cpus},
        "bootstage": None if facts.bootstage is None else bootstage_json(facts.bootstage),
        "initcalls": {
            "count": len(calls),
            "total_us": sum(call.duration_us for call in calls),
            "calls": [
                {"name": call.name, "returned": call.returned, "duration_us": call.duration_us}
                for call in calls
            ],
        },
    }

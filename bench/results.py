"""bench/RESULTS.md: each benchmark owns one ``## NAME`` section and replaces it when it runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

RESULTS = Path(__file__).with_name("RESULTS.md")


def write_section(name: str, section: str) -> None:
    """Replace the ``## name`` section of RESULTS.md with ``section`` (appended if absent)."""
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else ""
    start = text.find(f"## {name}\n")
    if start >= 0:
        end = text.find("\n## ", start + 1)
        rest = text[end + 1 :] if end >= 0 else ""
        text = text[:start] + (section.rstrip("\n") + "\n\n" if rest else section) + rest
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + section
    RESULTS.write_text(text, encoding="utf-8")


def tune_rows(found: dict[str, Any]) -> list[str]:
    """Return a Markdown row per knob of a tune's JSON document ``found``: knob, risk, decision,
    saving with its interval, boots a side, why (under the header the tune benchmarks print)."""
    return [
        f"| `{c['knob']}` | {c['risk']} | {c['decision']} | "
        + ("" if c["saving"] is None else f"{c['saving']:.2f}")
        + (f" [{c['ci'][0]:.2f}, {c['ci'][1]:.2f}]" if c.get("ci") else "")
        + f" | {c['boots']} | {c.get('why') or ''} |"
        for c in found["candidates"]
    ]

"""bench/RESULTS.md: each benchmark owns one ``## NAME`` section and replaces it when it runs."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).with_name("RESULTS.md")


def write_section(name: str, section: str) -> None:
    """Replace the ``## name`` section of RESULTS.md with ``section`` (appended if absent)."""
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else ""
    start = text.find(f"## {name}\n")
    if start >= 0:
        end = text.find("\n## ", start + 1)
        text = text[:start] + section + (text[end + 1 :] if end >= 0 else "")
    else:
        text = text.rstrip("\n") + ("\n\n" if text else "") + section
    RESULTS.write_text(text, encoding="utf-8")

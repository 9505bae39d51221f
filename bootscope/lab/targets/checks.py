"""What ``bootscope target check`` says of a machine, whatever its kind: one :class:`Check` a line."""

from __future__ import annotations

from dataclasses import dataclass

GOOD = "ok"
WARN = "warn"
BAD = "bad"


@dataclass(frozen=True, slots=True)
class Check:
    """One check: its name, ``ok``/``warn``/``bad``, what was found, and what to change and why."""

    name: str
    status: str
    found: str
    advice: str = ""

"""Small pieces shared by the terminal views of a boot: cleaned log text, seconds, bars.

Log text is hostile: every string from a log goes through :func:`clean` (control characters and
escape sequences shown as ``\\xNN``); in a rich view it goes into ``rich.text.Text``, never into
markup. Nothing here imports rich: the glance view does without it.
"""

from __future__ import annotations

from bootscope.analyze.advice_basis import phase_at as phase_of_time
from bootscope.model import Breakdown, InitcallSummary

BAR_WIDTH = 20
MAX_TEXT = 100
_CONTROL = {code: f"\\x{code:02x}" for code in (*range(0x20), *range(0x7F, 0xA0))}


def clean(text: str | None, limit: int = MAX_TEXT) -> str:
    """Return ``text`` with control characters shown as ``\\xNN``, cut to ``limit`` characters
    (an ellipsis marks the cut); ``"-"`` for None."""
    if text is None:
        return "-"
    shown = text.translate(_CONTROL)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def seconds(value: float | None) -> str:
    """Return ``value`` (seconds) with 3 decimals, or ``"-"`` when the log did not say."""
    return "-" if value is None else f"{value:.3f}"


def bar(share: float, width: int = BAR_WIDTH) -> str:
    """Return a bar of ``width`` characters filled to ``share`` (0..1, clamped)."""
    filled = max(0, min(width, round(share * width)))
    return "█" * filled + "·" * (width - filled)


def phase_at(b: Breakdown, time_s: float) -> str:
    """Return the name of the phase of ``b`` that guest time ``time_s`` falls in (the analysis's
    reading: ``"userspace"`` from ``Run /init`` on), else ``"-"``."""
    return phase_of_time(b, time_s) or "-"


def initcall_cells(calls: InitcallSummary, top_n: int) -> list[tuple[str, str, str, str]]:
    """Return the cells (initcall, start s, duration ms, ret) of the ``top_n`` slowest initcalls,
    log text cleaned."""
    rows = []
    for call in calls.top[:top_n]:
        duration = "-" if call.duration_us is None else f"{call.duration_us / 1000:.3f}"
        name = call.name if call.module is None else f"{call.name} [{call.module}]"
        rows.append((clean(name), seconds(call.start_s), duration, str(call.ret)))
    return rows


def unfinished_lines(calls: InitcallSummary, top_n: int) -> list[str]:
    """Return one line for each of the first ``top_n`` initcalls that never returned."""
    return [
        f"  never returned: {clean(call.name)} (called at {seconds(call.start_s)} s)"
        for call in calls.unfinished[:top_n]
    ]

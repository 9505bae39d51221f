"""The one analysis of a captured boot (console lines with host arrival times): its breakdown.

Every command reads a stored or just-captured boot through :func:`analyze_captured`: the boot
workload when a boot ends (its stored metrics come from here), ``analyze --run``, ``report --run``,
``trace --run``, ``plot --run`` and ``compare``. So the same boot gives the same numbers everywhere,
including a console on which ``quiet`` left no timed kernel line, where the marker still carries the
guest's uptime and the host stamps still give the wall time.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from bootscope import defaults
from bootscope.analyze.breakdown import analyze_boot
from bootscope.analyze.systemd import fault_note, login_prompt_s, systemd_accounting
from bootscope.errors import BootscopeError, ParseError
from bootscope.metrics import BOOT_METRICS, KERNEL_INIT_S
from bootscope.model import Boot, Breakdown, LogLine, Outcome, SystemdAccounting, UnitSpan
from bootscope.parse import parse_captured

# Firmware's terminal resets (ESC c, ESC [2J) can share a line with the marker when the kernel is
# quiet (seen here: "Booting from ROM..<ESC>c<ESC>[?7l<ESC>[2JBOOTSCOPE-MARKER init uptime=1.88").
# A terminal shows nothing of what came before a reset or a clear, and the parse patterns match at
# line start, so analysis sees only the text after the last one (the store keeps the raw line).
_RESET_OR_CLEAR = re.compile(r"\x1bc|\x1b\[[0-9;]*2J")
_LEADING_ESCAPES = re.compile(r"^(?:\x1b(?:\[[0-9;?]*[A-Za-z]|[^\[]))+")
NO_TIMED_LINE = f"no timed kernel line, so no {KERNEL_INIT_S}"


@dataclass(frozen=True, slots=True)
class CapturedAnalysis:
    """A captured boot's breakdown, the parser's format name and warnings, a note for the user
    (non-empty when part of the boot could not be timed), its lines and, for a full userspace boot,
    what systemd's collector printed."""

    breakdown: Breakdown
    format: str
    warnings: tuple[str, ...]
    note: str
    lines: tuple[LogLine, ...] = ()
    systemd: SystemdAccounting | None = None

    @property
    def units(self) -> tuple[UnitSpan, ...]:
        """The boot's systemd units with their activating/active times (s, systemd's monotonic
        clock, which is the kernel's printk clock); empty where no collector printed them."""
        return self.systemd.units if self.systemd is not None else ()


def terminal_text(text: str) -> str:
    """Return what a terminal shows of ``text`` on a fresh line: the part after its last reset or
    clear-screen sequence, without leading escape sequences."""
    resets = list(_RESET_OR_CLEAR.finditer(text))
    visible = text[resets[-1].end() :] if resets else text
    return _LEADING_ESCAPES.sub("", visible)


def user_marker(marker: str) -> str | None:
    """Return the regex to hand to analyze for a variant's ``marker`` (None for bootscope's own
    marker, whose uptime analyze reads itself)."""
    return None if marker == defaults.MARKER_PREFIX else marker


def analyze_captured(
    captured: Sequence[LogLine],
    *,
    host_start_ns: int | None,
    marker_regex: str | None = None,
    top_n: int = defaults.TOP_N,
    fmt: str = "auto",
) -> CapturedAnalysis:
    """Return the analysis of one boot's captured console (times in seconds; host metrics need
    ``host_start_ns``, the host's monotonic ns at QEMU start). A console with no timed kernel line is
    analysed untimed (only the marker's uptime and host times), with a note saying so.

    Raises InputError for a bad marker regex or format name."""
    cleaned = [
        replace(line, text=terminal_text(line.text)) if "\x1b" in line.text else line for line in captured
    ]
    note = ""
    try:
        parsed = parse_captured(cleaned, fmt)
        lines: list[LogLine] = [line for part in parsed.boots for line in part]
        fmt_name, warnings = parsed.format, parsed.warnings
    except ParseError:
        # `quiet` hides every timed kernel line, yet the marker still carries the guest's uptime.
        lines, note, fmt_name, warnings = cleaned, NO_TIMED_LINE, "untimed", ()
    breakdown = analyze_boot(lines, top_n=top_n, marker_regex=marker_regex, host_start_ns=host_start_ns)
    # A full userspace boot (bootscope image) adds the getty's prompt on the host clock and systemd's
    # own accounting; its initrd and systemd times are the breakdown's (printk clock).
    metrics = replace(breakdown.metrics, login_prompt_s=login_prompt_s(lines, host_start_ns))
    return CapturedAnalysis(
        replace(breakdown, metrics=metrics), fmt_name, warnings, note, tuple(lines), systemd_accounting(lines)
    )


def measure(
    boot: Boot,
    marker: str,
    release_hint: str | None,
    names: tuple[str, ...] = BOOT_METRICS,
    *,
    full_userspace: bool = False,
) -> tuple[dict[str, float | None], str | None, str]:
    """Return (the metrics ``names`` in seconds, kernel release, note) for one boot; ``marker`` is the
    variant's marker regex. The note says why a boot could not be (fully) analysed and, for a
    ``full_userspace`` boot (a system image), the units still starting and the last lines of one that
    timed out, "Bootup is not yet finished" and failed units. Never raises for a bad log."""
    try:
        analysis = analyze_captured(
            boot.lines, host_start_ns=boot.host_start_ns, marker_regex=user_marker(marker)
        )
    except BootscopeError as error:
        return {}, release_hint, f"not analysed: {error}"
    metrics = {name: getattr(analysis.breakdown.metrics, name) for name in names}
    note = analysis.note
    if full_userspace:
        # Say which unit held the boot up, that systemd had not finished, which units failed.
        fault = fault_note(analysis.lines, analysis.systemd, boot.outcome is Outcome.TIMEOUT)
        note = "; ".join(part for part in (note, fault) if part)
    return metrics, analysis.breakdown.identity.release or release_hint, note

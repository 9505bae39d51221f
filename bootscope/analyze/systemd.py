"""A full userspace boot's systemd part: its milestones on the console and systemd's own accounting.

Read from one boot's parsed console lines (printk-stamped kernel and systemd lines, untimed getty and
collector lines, each with its host arrival time):

- the getty's login prompt behind ``login_prompt_s`` (host clock; ``initrd_s`` and
  ``systemd_userspace_s`` are the breakdown's, read from systemd's lines by the pattern table);
- what ``bootscope-collect.service`` printed between its markers (``systemd-analyze time``, blame,
  critical chain, per-unit timestamps, failed units), parsed by :mod:`bootscope.parse.systemd`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bootscope import defaults
from bootscope.model import LogLine, SystemdAccounting
from bootscope.parse.systemd import (
    UNIT_DONE_RE,
    UNIT_STARTING_RE,
    parse_blame,
    parse_critical_chain,
    parse_failed,
    parse_time,
    parse_unit_show,
)

_LOGIN_RE = re.compile(defaults.LOGIN_PROMPT)
_SECTION_PREFIX = defaults.COLLECT_SECTION + " "


def login_prompt_s(lines: Sequence[LogLine], host_start_ns: int | None) -> float | None:
    """Return the host time (s) from QEMU start to the getty's login prompt on the console, or None
    without a prompt or a start time. (``initrd_s`` and ``systemd_userspace_s`` are on the printk
    clock and come from the breakdown: ``parse/patterns.py`` reads systemd's lines.)"""
    if host_start_ns is None:
        return None
    for line in lines:
        if line.guest_s is None and line.host_ns is not None and _LOGIN_RE.search(line.text):
            return (line.host_ns - host_start_ns) / 1e9
    return None


def systemd_accounting(lines: Sequence[LogLine]) -> SystemdAccounting | None:
    """Return what the image's collector printed (None if it printed nothing: no begin marker).
    Kernel lines that the console interleaved with it (printk-stamped) are skipped; a block cut
    short (no end marker) is returned with ``complete`` False."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    begun = complete = False
    for line in lines:
        text = line.text
        if not begun:
            begun = text.strip() == defaults.COLLECT_BEGIN
            continue
        if line.guest_s is not None:
            continue
        if text.strip() == defaults.COLLECT_END:
            complete = True
            break
        if text.startswith(_SECTION_PREFIX):
            current = sections.setdefault(text.removeprefix(_SECTION_PREFIX).strip(), [])
        elif current is not None:
            current.append(text)
    if not begun:
        return None
    state = next((text.strip() for text in sections.get("state", []) if text.strip()), None)
    return SystemdAccounting(
        state=state,
        time=parse_time(sections.get("time", [])),
        blame=parse_blame(sections.get("blame", [])),
        critical_chain=parse_critical_chain(sections.get("critical-chain", [])),
        units=parse_unit_show(sections.get("units", [])),
        failed=parse_failed(sections.get("failed", [])),
        complete=complete,
    )


def still_starting(lines: Sequence[LogLine]) -> tuple[str, ...]:
    """Return the units PID 1 said it was starting (``Starting X...``, ``Mounting X...``) with no
    later line saying they started, finished or failed, in the order they began."""
    pending: dict[str, None] = {}
    for line in lines:
        if line.guest_s is None or "systemd[1]: " not in line.text:
            continue
        begun = UNIT_STARTING_RE.match(line.text)
        if begun:
            pending[begun.group(1)] = None
            continue
        done = UNIT_DONE_RE.match(line.text)
        if done:
            pending.pop(done.group(1), None)
    return tuple(pending)


def fault_note(lines: Sequence[LogLine], accounting: SystemdAccounting | None, timed_out: bool) -> str:
    """Return what a full userspace boot's record should say about how it went wrong: for a boot
    that timed out, the units still starting and the console's last lines; for a collector that found
    the boot not finished, that (with systemd's state). Empty when there is nothing to say."""
    parts: list[str] = []
    if timed_out:
        starting = still_starting(lines)
        if starting:
            parts.append("still starting: " + ", ".join(starting[-3:]))
        last = [line.text.strip()[:120] for line in lines if line.text.strip()][-LAST_LINES:]
        if last:
            parts.append("last lines: " + " | ".join(last))
    time = accounting.time if accounting is not None else None
    if time is not None and not time.finished:
        state = accounting.state if accounting is not None and accounting.state else "unknown"
        parts.append(f"systemd: Bootup is not yet finished (state {state})")
    if accounting is not None and accounting.failed:
        parts.append("failed units: " + ", ".join(accounting.failed))
    return "; ".join(parts)


# How many console lines a timed-out boot's record quotes.
LAST_LINES = 3

"""A full userspace boot's systemd part: its milestones on the console and systemd's own accounting.

Read from one boot's parsed console lines (printk-stamped kernel and systemd lines, untimed getty and
collector lines, each with its host arrival time):

- the milestones behind the metrics ``initrd_s``, ``systemd_userspace_s`` and ``login_prompt_s``
  (definitions in :mod:`bootscope.metrics`);
- what ``bootscope-collect.service`` printed between its markers (``systemd-analyze time``, blame,
  critical chain, per-unit timestamps, failed units), parsed by :mod:`bootscope.parse.systemd`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bootscope import defaults
from bootscope.model import LogLine, SystemdAccounting
from bootscope.parse.patterns import BY_NAME
from bootscope.parse.systemd import (
    STARTUP_FINISHED_RE,
    SYSTEMD_START_RE,
    UNIT_DONE_RE,
    UNIT_STARTING_RE,
    parse_blame,
    parse_critical_chain,
    parse_failed,
    parse_time,
    parse_unit_show,
)

_RUN_INIT_RE = BY_NAME["run_init"].regex
_LOGIN_RE = re.compile(defaults.LOGIN_PROMPT)
_SECTION_PREFIX = defaults.COLLECT_SECTION + " "


@dataclass(frozen=True, slots=True)
class UserspaceTimes:
    """A full boot's userspace milestones: the initramfs's time (s from ``Run /init`` to the real
    root's systemd start, printk clock), systemd's time to a finished boot (s, printk clock) and the
    host time from QEMU start to the getty's login prompt (s). None where the console lacks a line."""

    initrd_s: float | None
    systemd_userspace_s: float | None
    login_prompt_s: float | None


def userspace_times(lines: Sequence[LogLine], host_start_ns: int | None) -> UserspaceTimes:
    """Return the userspace milestones of one boot's parsed console lines (see UserspaceTimes)."""
    run_init_s: float | None = None
    systemd_start_s: float | None = None
    finished_s: float | None = None
    login_ns: int | None = None
    for line in lines:
        if line.guest_s is not None:
            if run_init_s is None and _RUN_INIT_RE.match(line.text):
                run_init_s = line.guest_s
            elif SYSTEMD_START_RE.match(line.text):
                systemd_start_s, finished_s = line.guest_s, None  # the last start is the real root's
            elif finished_s is None and STARTUP_FINISHED_RE.match(line.text):
                finished_s = line.guest_s
        elif login_ns is None and line.host_ns is not None and _LOGIN_RE.search(line.text):
            login_ns = line.host_ns
    return UserspaceTimes(
        initrd_s=_delta(run_init_s, systemd_start_s),
        systemd_userspace_s=_delta(systemd_start_s, finished_s),
        login_prompt_s=None
        if login_ns is None or host_start_ns is None
        else (login_ns - host_start_ns) / 1e9,
    )


def _delta(start: float | None, end: float | None) -> float | None:
    return None if start is None or end is None or end < start else end - start


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

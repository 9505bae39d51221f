"""What systemd prints about a boot: its own log lines and the output of ``systemd-analyze``.

Two sources, both from systemd 252 (Debian bookworm), source paths of the systemd tree:

- PID 1's log lines, which reach the console with printk stamps when it logs to the kernel
  (``systemd.log_target=kmsg``): the start line, printed by ``log_execution_mode()`` in
  src/core/main.c ("systemd 252.39-1~deb12u2 running in system mode (+PAM ...)"), and the end of the
  boot, printed by ``manager_notify_finished()`` in src/core/manager.c ("Startup finished in ...").
- The text of ``systemd-analyze time`` (src/analyze/analyze-time-data.c ``pretty_boot_time()``),
  ``blame`` (src/analyze/analyze-blame.c), ``critical-chain`` (src/analyze/analyze-critical-chain.c)
  and ``systemctl show -p Id,...TimestampMonotonic``, as the image's collector prints them.

Durations use systemd's ``format_timespan()`` (src/basic/time-util.c): space-separated parts such as
``1min 3.044s``, ``820ms``, ``356us`` (``µs`` on a UTF-8 terminal), ``1h 2min``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from bootscope.errors import ParseError
from bootscope.model import ChainLink, SystemdAccounting, SystemdTime, UnitSpan

_UNIT_SECONDS = {
    "y": 31557600.0,
    "month": 2629800.0,
    "w": 604800.0,
    "d": 86400.0,
    "h": 3600.0,
    "min": 60.0,
    "s": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "µs": 1e-6,
    "ns": 1e-9,
}
_PART = r"\d+(?:\.\d+)?(?:y|month|w|d|h|min|ms|us|µs|ns|s)"
SPAN = rf"{_PART}(?: {_PART})*"
_PART_RE = re.compile(r"(\d+(?:\.\d+)?)(y|month|w|d|h|min|ms|us|µs|ns|s)")
_SPAN_RE = re.compile(rf"^{SPAN}$")
# pretty_boot_time(): "Startup finished in 1.2s (firmware) + 0.5s (loader) + 2.146s (kernel) +
# 1.845s (initrd) + 8.437s (userspace) = 12.429s" (phases systemd has no timestamp for are left out).
_TIME_PHASE_RE = re.compile(rf"({SPAN}) \((firmware|loader|kernel|initrd|userspace)\)")
_TIME_TOTAL_RE = re.compile(rf"= ({SPAN})\.?\s*$")
_TARGET_RE = re.compile(rf"^(\S+) reached after ({SPAN}) in userspace")
_NOT_FINISHED = "Bootup is not yet finished"
_BLAME_RE = re.compile(rf"^\s*({SPAN}) (\S+)\s*$")
# analyze-critical-chain.c: "unit @at +took" after its tree, two characters a level: "  ", "│ ",
# "└─", "├─" (or "| ", "`-", "|-" without UTF-8). A unit's name may start with "-" ("-.slice").
_CHAIN_RE = re.compile(
    r"^(?P<tree>(?:  |│ |\| |└─|├─|`-|\|-)*)(?P<unit>[^\s@+][^\s@+]*)"
    rf"(?: @(?P<at>{SPAN}))?(?: \+(?P<took>{SPAN}))?\s*$"
)
_SHOW_RE = re.compile(r"^([A-Za-z]+)=(.*)$")
# The job status messages PID 1 logs per unit (src/core/service.c, mount.c, swap.c, ...
# status_message_formats; src/core/job.c job_emit_done_message for the failures): a unit is being
# started from "Starting"/"Mounting"/"Activating swap" until its "Started"/"Finished"/"Mounted"/
# "Activated swap"/"Failed to start"/"Dependency failed for" line.
UNIT_STARTING_RE = re.compile(r"^systemd\[1\]: (?:Starting|Mounting|Activating swap) (\S+?)(?: - |\.\.\.|$)")
UNIT_DONE_RE = re.compile(
    r"^systemd\[1\]: (?:Started|Finished|Mounted|Activated swap|Failed to start|Failed to mount|"
    r"Failed to activate swap|Dependency failed for) (\S+?)(?: - |\.$|$)"
)


def span_s(text: str) -> float:
    """Return a systemd time span (``1min 3.044s``, ``820ms``, ``356us``) in seconds; raises
    ParseError for text that is not one."""
    text = text.strip()
    if not _SPAN_RE.match(text):
        raise ParseError(f"not a systemd time span: {text!r}")
    return sum(float(number) * _UNIT_SECONDS[unit] for number, unit in _PART_RE.findall(text))


def parse_time(lines: Iterable[str]) -> SystemdTime | None:
    """Return what ``systemd-analyze time`` printed (s per phase), ``finished=False`` for "Bootup is
    not yet finished", None when the lines hold neither. Never raises."""
    found: SystemdTime | None = None
    for raw in lines:
        line = raw.strip()
        if _NOT_FINISHED in line:
            return SystemdTime(finished=False)
        if "Startup finished in " in line:
            phases = {name: span_s(value) for value, name in _TIME_PHASE_RE.findall(line)}
            total = _TIME_TOTAL_RE.search(line)
            found = SystemdTime(
                finished=True,
                firmware_s=phases.get("firmware"),
                loader_s=phases.get("loader"),
                kernel_s=phases.get("kernel"),
                initrd_s=phases.get("initrd"),
                userspace_s=phases.get("userspace"),
                total_s=span_s(total.group(1)) if total else None,
            )
            continue
        target = _TARGET_RE.match(line)
        if target and found is not None:
            found = replace(found, target=target.group(1), target_reached_s=span_s(target.group(2)))
    return found


def parse_blame(lines: Iterable[str]) -> tuple[tuple[str, float], ...]:
    """Return ``systemd-analyze blame`` as (unit, seconds) in the order printed (longest first);
    lines that are not blame lines (a prompt, pasted text) are skipped."""
    rows = []
    for line in lines:
        match = _BLAME_RE.match(line)
        if match:
            rows.append((match.group(2), span_s(match.group(1))))
    return tuple(rows)


def parse_critical_chain(lines: Iterable[str]) -> tuple[ChainLink, ...]:
    """Return ``systemd-analyze critical-chain``'s tree as links (depth 0 = the target it starts
    from); the header lines and anything that is not a unit line are skipped."""
    links = []
    for line in lines:
        if not line.strip() or line.startswith(("The time when", "The time the")):
            continue
        match = _CHAIN_RE.match(line)
        if not match or "." not in match.group("unit") or not (match.group("at") or match.group("took")):
            continue
        depth = len(match.group("tree")) // 2
        at, took = match.group("at"), match.group("took")
        links.append(
            ChainLink(match.group("unit"), span_s(at) if at else None, span_s(took) if took else None, depth)
        )
    return tuple(links)


def parse_unit_show(lines: Iterable[str]) -> tuple[UnitSpan, ...]:
    """Return the units of ``systemctl show -p Id,InactiveExitTimestampMonotonic,
    ActiveEnterTimestampMonotonic,ActiveExitTimestampMonotonic,InactiveEnterTimestampMonotonic``
    (blocks separated by blank lines; microseconds, 0 = never) that ever started, in order of
    activation."""
    units: list[UnitSpan] = []
    block: dict[str, str] = {}
    for line in [*lines, ""]:
        match = _SHOW_RE.match(line.strip())
        if match:
            block[match.group(1)] = match.group(2)
            continue
        if not line.strip() and block:
            span = _unit_span(block)
            if span is not None:
                units.append(span)
            block = {}
    return tuple(
        sorted(units, key=lambda u: u.activating_s if u.activating_s is not None else u.active_s or 0.0)
    )


def _unit_span(block: dict[str, str]) -> UnitSpan | None:
    def seconds(key: str) -> float | None:
        value = block.get(key, "")
        return int(value) / 1e6 if value.isdigit() and int(value) > 0 else None

    unit = block.get("Id")
    activating, active = seconds("InactiveExitTimestampMonotonic"), seconds("ActiveEnterTimestampMonotonic")
    if not unit or (activating is None and active is None):
        return None
    return UnitSpan(
        unit,
        activating,
        active,
        seconds("ActiveExitTimestampMonotonic"),
        seconds("InactiveEnterTimestampMonotonic"),
    )


def parse_failed(lines: Sequence[str]) -> tuple[str, ...]:
    """Return the unit names of ``systemctl list-units --failed --plain --no-legend``."""
    return tuple(line.split()[0] for line in lines if line.strip() and "." in line.split()[0])


def parse_analyze_output(lines: Iterable[str]) -> SystemdAccounting | None:
    """Return what pasted ``systemd-analyze time``, ``blame`` and ``critical-chain`` output holds, in
    any order and with terminal text around it (prompts, other commands' output, a list cut short);
    None when the text holds none of the three. ``state`` is None (nobody asked systemd) and
    ``complete`` True. Never raises."""
    text = [line.rstrip("\r\n") for line in lines]
    time = parse_time(text)
    blame = parse_blame(text)
    chain = parse_critical_chain(text)
    if time is None and not blame and not chain:
        return None
    return SystemdAccounting(
        state=None, time=time, blame=blame, critical_chain=chain, units=(), failed=(), complete=True
    )

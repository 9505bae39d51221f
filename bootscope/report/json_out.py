"""A Breakdown as the stable, documented JSON form (docs/json-analyze.md); absent values are null."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import fields
from typing import IO, Any

import orjson

import bootscope
from bootscope.metrics import BEFORE_TIMEKEEPING_S, BOOT_LOG_DEFINITIONS
from bootscope.model import Breakdown, Initcall, SystemdTime
from bootscope.prekernel import BootstageReport, EarlyCounter

SCHEMA_VERSION = 1
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def dumps_ascii(value: Any) -> str:
    """Return ``value`` as compact JSON text, ASCII only (as ``json.dumps`` escapes, ``\\uXXXX``).

    orjson writes a boot's document about six times faster than the standard library's encoder;
    escaping keeps the output safe for any locale's stdout. numpy scalars are written as numbers.
    """
    try:
        text = orjson.dumps(value, option=orjson.OPT_SERIALIZE_NUMPY).decode("utf-8")
    except orjson.JSONEncodeError:  # a lone surrogate in a string, or a type orjson does not know
        return json.dumps(value, separators=(",", ":"))
    return text if text.isascii() else _NON_ASCII.sub(_escape, text)


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _s(value: float | None) -> float | None:
    # Durations are differences of printk stamps (microseconds) or host stamps (nanoseconds): round
    # to the nanosecond so that float artifacts such as 0.4190689999999999 do not reach the reader.
    return None if value is None else round(value, 9)


def _initcall(call: Initcall) -> dict[str, Any]:
    return {
        "name": call.name,
        "module": call.module,
        "start_s": _s(call.start_s),
        "duration_us": call.duration_us,
        "ret": call.ret,
    }


def breakdown_to_dict(b: Breakdown) -> dict[str, Any]:
    """Return one boot's breakdown as plain JSON-ready values (seconds, microseconds, KiB as named)."""
    identity = b.identity
    metrics = b.metrics
    return {
        "identity": {
            "release": identity.release,
            "cmdline": identity.cmdline,
            "cpus": identity.cpus,
            "arch": identity.arch,
            "memory_kb": identity.memory_kb,
        },
        "metrics": {name: _s(getattr(metrics, name, None)) for name in BOOT_LOG_DEFINITIONS},
        "milestones": {name: _s(t) for name, t in b.milestones.items()},
        "phases": [
            {
                "name": p.name,
                "start_s": _s(p.start_s),
                "end_s": _s(p.end_s),
                "duration_s": _s(p.duration_s),
                "share": None if p.share is None else round(p.share, 6),
                "missing": p.missing,
            }
            for p in b.phases
        ],
        "gaps": [
            {"start_s": _s(g.start_s), "duration_s": _s(g.duration_s), "before": g.before, "after": g.after}
            for g in b.gaps
        ],
        "initcalls": {
            "count": b.initcalls.count,
            "total_s": _s(b.initcalls.total_s),
            "failed": [_initcall(c) for c in b.initcalls.failed],
            "unfinished": [_initcall(c) for c in b.initcalls.unfinished],
            "top": [_initcall(c) for c in b.initcalls.top],
        },
        "cpu_bringup": {
            "cpus": [
                {
                    "cpu": c.cpu,
                    "start_s": _s(c.start_s),
                    "duration_s": _s(c.duration_s),
                    "phases_cycles": list(c.phases_cycles) or None,
                    "total_cycles": c.total_cycles,
                }
                for c in b.cpu_bringup.cpus
            ],
            "serial_s": _s(b.cpu_bringup.serial_s),
            "parallel_estimate_s": _s(b.cpu_bringup.parallel_estimate_s),
        },
        "advice": [
            {"title": a.title, "evidence": a.evidence, "cost_s": _s(a.cost_s), "remedy": a.remedy}
            for a in b.advice
        ],
        "lines": {
            "total": b.line_count,
            "timed": b.timed_line_count,
            "first_s": _s(b.first_s),
            "last_s": _s(b.last_s),
        },
        "warnings": list(b.warnings),
        "systemd_stated": _stated(b),
        "panic": None if b.panic is None else {"t_s": _s(b.panic.t_s), "reason": b.panic.reason},
        "bootstage": None if b.bootstage is None else bootstage_json(b.bootstage),
        "early_counter": None if b.early_counter is None else _early(b.early_counter),
    }


def bootstage_json(report: BootstageReport) -> dict[str, Any]:
    """The boot loader's stages before the kernel: U-Boot's bootstage report (s from reset, on
    U-Boot's timer) or barebox's timed log (s on barebox's clock)."""
    return {
        "loader": report.loader,
        "records_stated": report.records_stated,
        "handoff_s": report.handoff_s,
        "stages": [
            {"name": stage.name, "mark_s": stage.mark_s, "since_previous_s": stage.elapsed_s}
            for stage in report.stages
        ],
        "accumulated": [{"name": name, "total_s": total_s} for name, total_s in report.accumulated],
    }


def _early(early: EarlyCounter) -> dict[str, Any]:
    """The kernel's early cycle-counter lines (s on the counter, from its start)."""
    return {
        "lines": early.lines,
        "kernel_start_s": early.kernel_start_s,
        "last_s": early.last_s,
        "restart_s": early.restart_s,
        BEFORE_TIMEKEEPING_S: _s(early.before_timekeeping_s),
    }


def _stated(b: Breakdown) -> dict[str, Any] | None:
    """What systemd's own "Startup finished in ..." line says, per phase it names (s)."""
    t = b.systemd_stated
    if t is None:
        return None
    # The phases the line can name; "X.target reached after" is systemd-analyze's, not the log's.
    phases = [f.name for f in fields(SystemdTime) if f.name.endswith("_s") and f.name != "target_reached_s"]
    return {name: _s(getattr(t, name)) for name in phases}


def _tool() -> dict[str, Any]:
    return {
        "name": "bootscope",
        "version": bootscope.__version__,
        "schema": SCHEMA_VERSION,
        "metric_definitions": dict(BOOT_LOG_DEFINITIONS),
    }


def analysis_document(
    path: str, fmt: str, boots: list[Breakdown], warnings: Sequence[str], undecodable_bytes: int
) -> dict[str, Any]:
    """Return the whole ``analyze --json`` document for one log (see docs/json-analyze.md)."""
    return {
        "tool": _tool(),
        "input": {
            "path": path,
            "format": fmt,
            "boots_found": len(boots),
            "undecodable_bytes": undecodable_bytes,
        },
        "warnings": list(warnings),
        "boots": [breakdown_to_dict(b) for b in boots],
    }


def write_analysis_document(
    out: IO[str],
    path: str,
    boots: Iterable[Breakdown],
    finish: Callable[[], tuple[str, int, Sequence[str], int]],
) -> None:
    """Write the same document as ``analysis_document``, one boot at a time (memory stays bounded).

    ``finish`` is called after the last boot and returns (format, boots found, warnings, undecodable
    bytes). The keys come out in a different order than ``analysis_document``; the content is the same.
    """
    out.write('{"tool":' + dumps_ascii(_tool()) + ',"boots":[')
    for index, b in enumerate(boots):
        out.write(("," if index else "") + dumps_ascii(breakdown_to_dict(b)))
    fmt, boots_found, warnings, undecodable = finish()
    tail = {
        "input": {"path": path, "format": fmt, "boots_found": boots_found, "undecodable_bytes": undecodable},
        "warnings": list(warnings),
    }
    out.write("]," + dumps_ascii(tail)[1:] + "\n")

"""One fleet log in, its boots out: the work one process of ``fleet import`` does per file.

A file is a kernel log in any format ``analyze`` reads (several boots each), a LAVA job log
(``output.yaml``: console lines with the dispatcher's stamps) or a KCIDB v5 document (boot results).
Every boot gets its metrics from the one analysis ``analyze`` uses (``analyze_columns``), so a log
gives the same numbers here as in ``bootscope analyze``.

A boot is ``failed`` when the kernel never ran init (a panic, a hang or a log cut short): it has no
``kernel_init_s``, and a summary counts it among the failures, not among the times.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import islice

from bootscope.analyze.breakdown import analyze_boot, analyze_columns
from bootscope.errors import BootscopeError, ParseError
from bootscope.metrics import BOOT_LOG_DEFINITIONS, KERNEL_INIT_S
from bootscope.model import Breakdown
from bootscope.parse import parse_captured, parse_log, scan_boots
from bootscope.parse.formats import stamped_format
from bootscope.parse.kcidb import KcidbBoot, looks_like_kcidb, outcome_of, read_kcidb
from bootscope.parse.lava import lava_console, looks_like_lava
from bootscope.sources.files import BLOCK_BYTES, read_text_lines
from bootscope.store.fleet import OUTCOME_FAILED, OUTCOME_OK, FleetBoot

NEVER_INIT = "no 'Run /init' line: the kernel never ran init (panic, hang) or the log was cut short"
_HEAD_LINES = 200
_KCIDB_HEAD_LINES = 20


@dataclass(frozen=True, slots=True)
class FileBoots:
    """What one file gave: its format and boots, or the one-line reason it could not be read."""

    path: str
    format: str
    boots: tuple[FleetBoot, ...] = ()
    error: str | None = None


def boot_from_breakdown(
    number: int, breakdown: Breakdown, meta: Mapping[str, str] | None = None
) -> FleetBoot:
    """Return the fleet boot ``number`` of a breakdown: its boot-log metrics (seconds) and outcome."""
    metrics = {
        name: float(value)
        for name in BOOT_LOG_DEFINITIONS
        if (value := getattr(breakdown.metrics, name, None)) is not None
    }
    # a boot that panicked failed, even after /init ran ("Attempted to kill init!")
    ok = metrics.get(KERNEL_INIT_S) is not None and breakdown.panic is None
    reason = (
        "" if ok else NEVER_INIT if breakdown.panic is None else f"kernel panic: {breakdown.panic.reason}"
    )
    return FleetBoot(
        number=number,
        outcome=OUTCOME_OK if ok else OUTCOME_FAILED,
        reason=reason,
        kernel_release=breakdown.identity.release,
        meta=dict(meta or {}),
        metrics=metrics,
    )


def _kernel_log(path: str, head: list[str]) -> tuple[str, tuple[FleetBoot, ...]]:
    source = read_text_lines(path)
    # The format from the first lines when they carry stamps (the vote over 2000 lines that
    # `analyze` takes was 40 % of the time per small log); from the whole sample when they do not.
    # The block scan for every dmesg file, however small: a worker reads many files, so numpy's import
    # is paid once and the block scan is the faster per byte
    stream = scan_boots(source.blocks(BLOCK_BYTES), stamped_format(head) or "auto", line_path_chars=0)
    boots = tuple(
        boot_from_breakdown(number, analyze_columns(columns, all_initcalls=False))
        for number, columns in enumerate(stream, start=1)
    )
    return stream.format, boots


def _lava(path: str) -> tuple[str, tuple[FleetBoot, ...]]:
    console = list(lava_console(read_text_lines(path)))
    parsed = parse_captured(console)
    boots = []
    for number, lines in enumerate(parsed.boots, start=1):
        # The host clock starts at the boot's first console line (firmware or boot loader), so
        # host_kernel_start_s is the time to the kernel's first line as the dispatcher saw it.
        start = next((line.host_ns for line in lines if line.host_ns is not None), None)
        boots.append(boot_from_breakdown(number, analyze_boot(lines, host_start_ns=start)))
    return "lava", tuple(boots)


def _kcidb_boot(number: int, boot: KcidbBoot) -> FleetBoot:
    meta = {**boot.meta, "kcidb_id": boot.test_id}
    metrics = {name: value for name, value in boot.numbers.items() if name in BOOT_LOG_DEFINITIONS}
    if not metrics and boot.log_excerpt:
        try:
            parsed = parse_log(boot.log_excerpt.splitlines())
            if parsed.boots:
                found = boot_from_breakdown(number, analyze_boot(parsed.boots[-1]))
                metrics = dict(found.metrics)
        except ParseError:
            pass  # an excerpt without kernel timestamps: the status still counts
    outcome = outcome_of(boot.status)
    reason = "" if outcome == OUTCOME_OK else f"KCIDB status {boot.status or '(none)'}"
    return FleetBoot(number, outcome, reason, None, meta, metrics)


def _kcidb(path: str) -> tuple[str, tuple[FleetBoot, ...]]:
    text = "\n".join(read_text_lines(path))
    try:
        document = json.loads(text)
    except ValueError as error:
        raise ParseError(f"not valid JSON ({error})") from error
    return "kcidb", tuple(_kcidb_boot(n, boot) for n, boot in enumerate(read_kcidb(document), start=1))


def _head(path: str) -> list[str]:
    return list(islice(iter(read_text_lines(path)), _HEAD_LINES))


def read_fleet_file(path: str) -> FileBoots:
    """Return the boots of one fleet log, or its one-line error (never raises for bad input: a
    fleet import counts and lists bad files and goes on)."""
    try:
        head = _head(path)
        if looks_like_lava(head):
            fmt, boots = _lava(path)
        elif looks_like_kcidb("\n".join(head[:_KCIDB_HEAD_LINES])):
            fmt, boots = _kcidb(path)
        else:
            fmt, boots = _kernel_log(path, head)
    except BootscopeError as error:
        return FileBoots(path, "", error=str(error))
    except (OSError, MemoryError, UnicodeError, ValueError) as error:
        return FileBoots(path, "", error=f"{type(error).__name__}: {error}")
    if not boots:
        return FileBoots(path, fmt, error="no boot found in the log")
    return FileBoots(path, fmt, boots)


def read_fleet_files(paths: Iterable[str]) -> list[FileBoots]:
    """Return :func:`read_fleet_file` of each path, in order (a process pool's unit of work)."""
    return [read_fleet_file(path) for path in paths]

"""One fleet log in, its boots out: the work one process of ``fleet import`` does per file.

A file is a kernel log in any format ``analyze`` reads (several boots each), a LAVA job log
(``output.yaml``: console lines with the dispatcher's stamps) or a KCIDB v5 document (boot results).
Every boot gets its metrics from the one analysis ``analyze`` uses (``analyze_columns``), so a log
gives the same numbers here as in ``bootscope analyze``.

A boot's outcome:

- ``failed``: the log says the boot died or hung: a kernel panic (at any point, "Attempted to kill
  init!" too), or, before the kernel ran init, an oops, a ``BUG:`` or a hang
  (``parse.failure_marks``); or the run says it failed (a KCIDB status FAIL or ERROR).
- ``incomplete``: the log stops before the end of the kernel's init (no ``Run /init as init
  process`` line, nor, for kernels that print none, a ``Freeing unused kernel memory`` line) and
  shows no failure: an excerpt, a ring buffer that wrapped, a capture stopped early. Nothing says
  the boot failed, nor that it succeeded: it is counted apart and enters no failure rate.
- ``ok``: the kernel ran init and did not panic.

A file with stamped lines of which none is a kernel line (no banner, no line of the pattern table,
no initcall, no timed panic, oops or hang line: a README or a mail that quotes one stamped line) is
no boot at all: a bad file with that reason, not an incomplete boot.

A pasted ``systemd-analyze time``/``blame`` text (what ``analyze`` reads when a file has no kernel
stamps) is one boot of format ``systemd-analyze`` with the userspace timings it carries:
``systemd_userspace_s`` from ``time`` and ``unit:NAME`` from ``blame``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import islice

from bootscope.analyze.breakdown import analyze_boot, analyze_columns
from bootscope.errors import BootscopeError, ParseError
from bootscope.metrics import BOOT_LOG_DEFINITIONS, SYSTEMD_USERSPACE_S, UNIT_METRIC_PREFIX
from bootscope.model import Breakdown, SystemdAccounting
from bootscope.parse import BootColumns, parse_captured, parse_log, scan_boots
from bootscope.parse.failure_marks import first_failure
from bootscope.parse.formats import stamped_format
from bootscope.parse.kcidb import KcidbBoot, looks_like_kcidb, outcome_of, read_kcidb
from bootscope.parse.lava import lava_console, looks_like_lava
from bootscope.parse.systemd import parse_analyze_output
from bootscope.sources.files import BLOCK_BYTES, read_text_lines
from bootscope.store.fleet import OUTCOME_FAILED, OUTCOME_INCOMPLETE, OUTCOME_OK, FleetBoot
from bootscope.usecases.fleet.host_fields import log_fields

CUT_SHORT = (
    "incomplete: the log stops before the kernel ran init (no 'Run /init' nor 'Freeing unused kernel"
    " memory' line) and shows no panic, oops or hang"
)
NOT_A_KERNEL_LOG = (
    "not a kernel log: timestamped lines, but no kernel line (no 'Linux version' banner, milestone,"
    " initcall, panic, oops or hang)"
)
SYSTEMD_FORMAT = "systemd-analyze"
# the milestones that end the kernel's init: "Run /init as init process", or, for kernels that print
# none (3.x, 4.4, 4.18), free_initmem()'s "Freeing unused kernel memory" just before it
_END_OF_KERNEL = ("run_init", "free_init")
_REASON_CHARS = 200
_HEAD_LINES = 200
_KCIDB_HEAD_LINES = 20


@dataclass(frozen=True, slots=True)
class FileBoots:
    """What one file gave: its format and boots, or the one-line reason it could not be read."""

    path: str
    format: str
    boots: tuple[FleetBoot, ...] = ()
    error: str | None = None


def ran_init(breakdown: Breakdown) -> bool:
    """Return True when the boot reached the end of the kernel's init (see the module docstring)."""
    return breakdown.metrics.kernel_init_s is not None or any(
        name in breakdown.milestones for name in _END_OF_KERNEL
    )


def boot_from_breakdown(
    number: int,
    breakdown: Breakdown,
    meta: Mapping[str, str] | None = None,
    failure_line: str | None = None,
) -> FleetBoot:
    """Return the fleet boot ``number`` of a breakdown: its boot-log metrics (seconds), outcome (see
    the module docstring; ``failure_line`` is the boot's first line that says it died or hung, which
    counts only before init ran), and the fields its log gives (``host_fields``) under ``meta``."""
    metrics = {
        name: float(value)
        for name in BOOT_LOG_DEFINITIONS
        if (value := getattr(breakdown.metrics, name, None)) is not None
    }
    # a boot that panicked failed, even after /init ran ("Attempted to kill init!")
    if breakdown.panic is not None:
        outcome, reason = OUTCOME_FAILED, f"kernel panic: {breakdown.panic.reason}"
    elif ran_init(breakdown):
        outcome, reason = OUTCOME_OK, ""
    elif failure_line is not None:
        outcome, reason = OUTCOME_FAILED, f"died before init: {failure_line[:_REASON_CHARS]}"
    else:
        outcome, reason = OUTCOME_INCOMPLETE, CUT_SHORT
    return FleetBoot(
        number=number,
        outcome=outcome,
        reason=reason,
        kernel_release=breakdown.identity.release,
        meta={**log_fields(breakdown.identity), **(meta or {})},
        metrics=metrics,
    )


def _failure_before_init(breakdown: Breakdown, texts: Iterable[str]) -> str | None:
    """The boot's first failure line (``texts``: a lazy iterable of its lines), read only for a boot
    that neither panicked nor ran init (the only boots whose outcome it decides)."""
    if breakdown.panic is not None or ran_init(breakdown):
        return None
    return first_failure(texts)


def _column_boot(number: int, columns: BootColumns) -> FleetBoot:
    breakdown = analyze_columns(columns, all_initcalls=False)
    texts = (columns.line(index).text for index in range(columns.line_count))
    failure = _failure_before_init(breakdown, texts)
    return boot_from_breakdown(number, breakdown, failure_line=failure)


def _has_kernel_line(columns: BootColumns) -> bool:
    """True when a boot holds a line the pattern table knows (the banner, a milestone, an initcall,
    a panic...) or a timed line that says the kernel died or hung."""
    if columns.known or len(columns.initcalls) > 0:
        return True
    timed = (columns.line(int(index)).text for index in columns.timed_index)
    return first_failure(timed) is not None


def _kernel_log(path: str, head: list[str]) -> tuple[str, tuple[FleetBoot, ...]]:
    """Return the format and boots of a kernel log. Raises ParseError for a log without stamps, or
    one whose boots hold no kernel line (NOT_A_KERNEL_LOG)."""
    source = read_text_lines(path)
    # The format from the first lines when they carry stamps (the vote over 2000 lines that
    # `analyze` takes was 40 % of the time per small log); from the whole sample when they do not.
    # The block scan for every dmesg file, however small: a worker reads many files, so numpy's import
    # is paid once and the block scan is the faster per byte
    stream = scan_boots(source.blocks(BLOCK_BYTES), stamped_format(head) or "auto", line_path_chars=0)
    boots = []
    kernel_lines = False
    for number, columns in enumerate(stream, start=1):
        boots.append(_column_boot(number, columns))
        kernel_lines = kernel_lines or _has_kernel_line(columns)
    if boots and not kernel_lines:
        # a text that only quotes a stamped line (a README, a mail): no boot to count, not even an
        # incomplete one
        raise ParseError(NOT_A_KERNEL_LOG)
    return stream.format, tuple(boots)


def _lava(path: str) -> tuple[str, tuple[FleetBoot, ...]]:
    console = list(lava_console(read_text_lines(path)))
    parsed = parse_captured(console)
    boots = []
    for number, lines in enumerate(parsed.boots, start=1):
        # The host clock starts at the boot's first console line (firmware or boot loader), so
        # host_kernel_start_s is the time to the kernel's first line as the dispatcher saw it.
        start = next((line.host_ns for line in lines if line.host_ns is not None), None)
        breakdown = analyze_boot(lines, host_start_ns=start)
        failure = _failure_before_init(breakdown, (line.text for line in lines))
        boots.append(boot_from_breakdown(number, breakdown, failure_line=failure))
    return "lava", tuple(boots)


def _kcidb_boot(number: int, boot: KcidbBoot) -> FleetBoot:
    meta = {**boot.meta, "kcidb_id": boot.test_id}
    metrics = {name: value for name, value in boot.numbers.items() if name in BOOT_LOG_DEFINITIONS}
    if not metrics and boot.log_excerpt:
        try:
            parsed = parse_log(boot.log_excerpt.splitlines())
            if parsed.boots:
                found = boot_from_breakdown(number, analyze_boot(parsed.boots[-1]), meta)
                metrics, meta = dict(found.metrics), dict(found.meta)
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


def systemd_boot(accounting: SystemdAccounting) -> FleetBoot | None:
    """Return the one boot of pasted systemd-analyze output: ``systemd_userspace_s`` from ``time``
    (systemd's "userspace": the real root's systemd start to "Startup finished") and ``unit:NAME``
    from ``blame`` (s); ``ok`` (systemd ran, so the kernel ran init). None when the text carries
    no timing (neither a finished ``time`` nor a ``blame`` line)."""
    metrics: dict[str, float] = {}
    time = accounting.time
    if time is not None and time.userspace_s is not None:
        metrics[SYSTEMD_USERSPACE_S] = time.userspace_s
    for unit, took_s in accounting.blame:
        metrics.setdefault(UNIT_METRIC_PREFIX + unit, took_s)
    if not metrics:
        return None
    return FleetBoot(1, OUTCOME_OK, "", None, {}, metrics)


def _systemd_paste(path: str) -> tuple[str, tuple[FleetBoot, ...]] | None:
    accounting = parse_analyze_output(read_text_lines(path))
    boot = None if accounting is None else systemd_boot(accounting)
    return None if boot is None else (SYSTEMD_FORMAT, (boot,))


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
            try:
                fmt, boots = _kernel_log(path, head)
            except ParseError:
                # no kernel stamps: pasted systemd-analyze output, as `analyze` reads it, or bad
                pasted = _systemd_paste(path)
                if pasted is None:
                    raise
                fmt, boots = pasted
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

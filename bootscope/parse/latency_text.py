"""Text output of cyclictest, oslat and ``rtla timerlat hist``, line by line, into LatencySeries.

Each regex names the rt-tests or kernel source that prints the line. Lines arrive cleaned (no
terminal escapes, no mail quote marks, no leading blanks): see :mod:`bootscope.parse.latency`.
Unknown lines (prose, ``WARN:``, the tools' banners) are ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

import numpy as np

from bootscope.latency_model import LatencySeries

# rt-tests src/cyclictest/cyclictest.c, print_stat(): "T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld ..."
CYCLIC_T_RE = re.compile(
    r"^T:\s*(?P<t>\d+)\s+\(\s*\d+\)\s+P:\s*(?P<p>\d+)\s+I:\s*(?P<i>\d+)\s+C:\s*(?P<c>\d+)\s+"
    r"Min:\s*(?P<min>\d+)\s+Act:\s*\d+\s+Avg:\s*(?P<avg>\d+)\s+Max:\s*(?P<max>\d+)"
)
# cyclictest.c, print_hist(): "# Histogram" then "%06d" and one "%06lu" per thread (tab-separated;
# -H adds a sum column), then the "# Total:", "# Min/Avg/Max Latencies:" and overflow footers.
CYCLIC_HIST_START_RE = re.compile(r"^# Histogram\s*$")
CYCLIC_ROW_RE = re.compile(r"^(\d{6,})((?:\s+\d+)+)\s*$")
CYCLIC_FOOTER_RE = re.compile(
    r"^# (?P<key>Total|Min Latencies|Avg Latencies|Max Latencies|Histogram Overflows):(?P<v>(?:\s+\d+)+)"
)
# cyclictest.c, print_hist(): "# Thread %d:" then " %05lu" per overflow cycle, "# %05d others" after 30.
CYCLIC_OVERFLOW_RE = re.compile(r"^# Thread (?P<t>\d+):(?P<v>(?:\s+\d+)*)")
# cyclictest.c, set_latency_target(): "# /dev/cpu_dma_latency set to %dus", once as a run starts.
CYCLIC_LATENCY_TARGET_RE = re.compile(r"^# /dev/cpu_dma_latency set to")
# An invocation quoted above a run's output ("$ sudo cyclictest -m ...", "# /usr/bin/cyclictest -p").
CYCLIC_COMMAND_RE = re.compile(r"(?:^|\s)(?:\S*/)?cyclictest\s+-")
# rt-tests src/oslat/oslat.c, write_summary(): "Core:", "%03u (us):", "Minimum:", "Average:", "Maximum:".
OSLAT_CORE_RE = re.compile(r"^Core:((?:\s+\d+)+)\s*$")
OSLAT_ROW_RE = re.compile(r"^(\d+) \(us\):((?:\s+\d+)+)(\s+\(including overflows\))?\s*$")
OSLAT_STAT_RE = re.compile(r"^(?P<key>Minimum|Average|Maximum):((?:\s+[\d.]+)+)\s*\(us\)")
# kernel tools/tracing/rtla/src/timerlat_hist.c, timerlat_print_stats()/timerlat_hist_header().
RTLA_START_RE = re.compile(r"^# RTLA timerlat histogram")
RTLA_UNIT_RE = re.compile(r"^# Time unit is (?P<unit>\w+)")
RTLA_HEADER_RE = re.compile(r"^Index((?:\s+(?:IRQ|Thr|Usr)-\d+)+)\s*$")
RTLA_ROW_RE = re.compile(r"^(\d+)((?:\s+\d+)+)\s*$")
RTLA_FOOTER_RE = re.compile(r"^(?P<key>over|count|min|avg|max):((?:\s+[\d.]+)+)\s*$")


def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split()]


def _dense(rows: dict[int, list[int]], column: int, length: int) -> np.ndarray:
    counts = np.zeros(length, dtype=np.int64)
    for value_us, row in rows.items():
        if column < len(row) and value_us < length:
            counts[value_us] = row[column]
    return counts


@dataclass
class _Cyclic:
    stats: dict[int, tuple[int, int, int, int, int, int]] = field(default_factory=dict)
    rows: dict[int, list[int]] = field(default_factory=dict)
    footers: dict[str, list[int]] = field(default_factory=dict)
    overflow_cycles: dict[int, list[int]] = field(default_factory=dict)
    in_hist: bool = False


def split_cyclictest_runs(lines: Iterable[str]) -> list[list[str]]:
    """Return ``lines`` cut into one list per cyclictest run (a paste may quote several invocations).

    A run ends where, after it printed results (``T:`` lines or histogram rows), an invocation or
    cyclictest's "# /dev/cpu_dma_latency set to" line begins the next one, or a second histogram
    starts. A live display's repeated ``T:`` lines stay one run. Always at least one list."""
    runs: list[list[str]] = [[]]
    has_results = has_rows = in_hist = False
    for line in lines:
        starts_run = CYCLIC_COMMAND_RE.search(line) or CYCLIC_LATENCY_TARGET_RE.match(line)
        hist_start = CYCLIC_HIST_START_RE.match(line)
        if (starts_run and has_results) or (hist_start and has_rows):
            runs.append([])
            has_results = has_rows = in_hist = False
        runs[-1].append(line)
        if hist_start:
            in_hist = True
        elif CYCLIC_T_RE.match(line) or (in_hist and CYCLIC_ROW_RE.match(line)):
            has_results = True
            has_rows = has_rows or in_hist
    return runs


def parse_cyclictest(
    lines: Iterable[str], source: str = "the output"
) -> tuple[list[LatencySeries], list[str]]:
    """Return cyclictest's threads from its text output (``T:`` lines, ``-h``/``-H`` histograms) and
    warnings (a histogram whose rows do not add up to ``# Total:``). Empty list: no cyclictest here.

    Output that holds several runs (:func:`split_cyclictest_runs`) gives each run's threads apart,
    named ``run1/T0``, ``run2/T0``..., with a warning naming ``source`` and the count of runs."""
    runs = [found for run in split_cyclictest_runs(lines) if (found := _parse_one_cyclictest(run))[0]]
    if len(runs) <= 1:
        return runs[0] if runs else ([], [])
    series: list[LatencySeries] = []
    warnings = [
        f"{source} holds {len(runs)} cyclictest runs; each is shown apart, its threads named "
        f"run1/T0 ... run{len(runs)}/T0"
    ]
    for number, (run_series, run_warnings) in enumerate(runs, start=1):
        series += [replace(s, name=f"run{number}/{s.name}") for s in run_series]
        warnings += [f"run{number}: {warning}" for warning in run_warnings]
    return series, warnings


def _parse_one_cyclictest(lines: Iterable[str]) -> tuple[list[LatencySeries], list[str]]:
    state = _Cyclic()
    for line in lines:
        if match := CYCLIC_T_RE.match(line):
            # Without -q, cyclictest reprints T: lines while it runs; the last one is the summary.
            g = match.groupdict()
            state.stats[int(g["t"])] = (
                int(g["p"]),
                int(g["i"]),
                int(g["c"]),
                int(g["min"]),
                int(g["avg"]),
                int(g["max"]),
            )
        elif CYCLIC_HIST_START_RE.match(line):
            state.in_hist = True
        elif state.in_hist and (match := CYCLIC_ROW_RE.match(line)):
            state.rows[int(match.group(1))] = _ints(match.group(2))
        elif match := CYCLIC_FOOTER_RE.match(line):
            state.footers[match.group("key")] = _ints(match.group("v"))
        elif match := CYCLIC_OVERFLOW_RE.match(line):
            # "# 00250 others" ends the list: cyclictest keeps only the first overflow cycles.
            listed = match.group("v")
            state.overflow_cycles[int(match.group("t"))] = _ints(listed)
    return _cyclic_series(state)


def _cyclic_series(state: _Cyclic) -> tuple[list[LatencySeries], list[str]]:
    warnings: list[str] = []
    threads = sorted(state.stats)
    if state.rows:
        width = len(state.footers.get("Min Latencies", [])) or min(len(r) for r in state.rows.values())
        threads = sorted(set(threads) | set(range(width)))
    series: list[LatencySeries] = []
    limit_us = max(state.rows) + 1 if state.rows else None
    for thread in threads:
        counts = _dense(state.rows, thread, limit_us) if limit_us is not None else None
        overflow = _footer(state, "Histogram Overflows", thread) or 0
        total = _footer(state, "Total", thread)
        if counts is not None and total is not None and int(counts.sum()) != total:
            warnings.append(
                f"cyclictest thread {thread}: histogram rows add up to {int(counts.sum())}, "
                f"'# Total:' says {total} (rows missing?)"
            )
        stat = state.stats.get(thread)
        min_us, avg_us, max_us = (
            (float(stat[3]), float(stat[4]), float(stat[5]))
            if stat
            else tuple(_float(_footer(state, key, thread)) for key in ("Min", "Avg", "Max"))
        )
        cycles = stat[2] if stat else (total + overflow if total is not None else None)
        series.append(
            LatencySeries(
                tool="cyclictest",
                name=f"T{thread}",
                cpu=None,
                counts=counts,
                overflow=overflow,
                limit_us=limit_us,
                cycles=cycles,
                min_us=min_us,
                avg_us=avg_us,
                max_us=max_us,
                interval_us=stat[1] if stat else None,
                priority=stat[0] if stat else None,
                overflow_cycles=tuple(state.overflow_cycles.get(thread, ())),
            )
        )
    return series, warnings


def _footer(state: _Cyclic, key: str, thread: int) -> int | None:
    full = {"Min": "Min Latencies", "Avg": "Avg Latencies", "Max": "Max Latencies"}.get(key, key)
    values = state.footers.get(full)
    return values[thread] if values is not None and thread < len(values) else None


def _float(value: int | None) -> float | None:
    return None if value is None else float(value)


def parse_oslat(lines: Iterable[str]) -> list[LatencySeries]:
    """Return one series per oslat core. oslat folds its overflow into the last bucket ("including
    overflows"), so that bucket becomes the overflow and ``limit_us`` its value. Empty: no oslat."""
    cores: list[int] = []
    rows: dict[int, list[int]] = {}
    last: int | None = None
    summary: dict[str, list[float]] = {}
    for line in lines:
        if match := OSLAT_CORE_RE.match(line):
            cores = _ints(match.group(1))
        elif cores and (match := OSLAT_ROW_RE.match(line)):
            rows[int(match.group(1))] = _ints(match.group(2))
            if match.group(3):
                last = int(match.group(1))
        elif cores and (match := OSLAT_STAT_RE.match(line)):
            summary[match.group("key")] = [float(v) for v in match.group(2).split()]
    if not cores or not rows:
        return []
    limit_us = last if last is not None else max(rows) + 1
    series = []
    for column, cpu in enumerate(cores):
        counts = _dense({k: v for k, v in rows.items() if k < limit_us}, column, limit_us)
        overflow = rows[last][column] if last is not None else 0
        stats = [
            summary[key][column] if column < len(summary.get(key, [])) else None
            for key in ("Minimum", "Average", "Maximum")
        ]
        series.append(
            LatencySeries(
                tool="oslat",
                name=f"cpu{cpu}",
                cpu=cpu,
                counts=counts,
                overflow=overflow,
                limit_us=limit_us,
                cycles=int(counts.sum()) + overflow,
                min_us=stats[0],
                avg_us=stats[1],
                max_us=stats[2],
            )
        )
    return series


def parse_rtla_hist(lines: Iterable[str]) -> tuple[list[LatencySeries], list[str]]:
    """Return one series per ``rtla timerlat hist`` column (IRQ-NNN, Thr-NNN, Usr-NNN) and warnings.
    Raises nothing; a nanosecond histogram (``-n``) is reported as a warning and skipped."""
    started = False
    names: list[str] = []
    rows: dict[int, list[int]] = {}
    footers: dict[str, list[float]] = {}
    for line in lines:
        if RTLA_START_RE.match(line):
            started = True
        elif started and (match := RTLA_UNIT_RE.match(line)):
            if not match.group("unit").startswith("micro"):
                return [], [f"rtla histogram in {match.group('unit')}: only microseconds are read"]
        elif started and (match := RTLA_HEADER_RE.match(line)):
            names = match.group(1).split()
        elif names and (match := RTLA_ROW_RE.match(line)):
            rows[int(match.group(1))] = _ints(match.group(2))
        elif names and (match := RTLA_FOOTER_RE.match(line)):
            footers[match.group("key")] = [float(v) for v in match.group(2).split()]
    if not names:
        return [], []
    limit_us = max(rows) + 1 if rows else 0
    series, warnings = [], []
    for column, name in enumerate(names):
        counts = _dense(rows, column, limit_us)
        over = footers.get("over", [])
        overflow = int(over[column]) if column < len(over) else 0
        count = footers.get("count", [])
        cycles = int(count[column]) if column < len(count) else None
        if cycles is not None and cycles != int(counts.sum()) + overflow:
            warnings.append(
                f"rtla {name}: rows and over: add up to {int(counts.sum()) + overflow}, count: {cycles}"
            )
        stat = [
            footers[k][column] if column < len(footers.get(k, [])) else None for k in ("min", "avg", "max")
        ]
        series.append(
            LatencySeries(
                tool="timerlat",
                name=name,
                cpu=int(name.split("-")[1]),
                counts=counts,
                overflow=overflow,
                limit_us=limit_us,
                cycles=cycles,
                min_us=stat[0],
                avg_us=stat[1],
                max_us=stat[2],
            )
        )
    return series, warnings

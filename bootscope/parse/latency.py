"""Latency tool output in, one LatencyRun out: cyclictest (text and ``--json``), oslat, rtla.

Lines are cleaned first, because people paste these outputs into mail and markdown: terminal escape
sequences (cyclictest without ``-q`` moves the cursor up), mail quote marks (``> ``), leading blanks
and code fences go; prose and ``WARN:`` lines are simply not matched. Text that is not text (NUL
bytes, mostly undecodable) is refused with one InputError.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Sequence
from typing import Any

import numpy as np

from bootscope.errors import InputError
from bootscope.latency_model import LatencyRun, LatencySeries
from bootscope.parse.latency_text import parse_cyclictest, parse_oslat, parse_rtla_hist

_ESCAPE_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Za-z0-9]|\r")
_QUOTE_RE = re.compile(r"^(?:\s*>)+\s?")
# rt-tests src/cyclictest/cyclictest.c, write_stats(): the "--json" file's "cmdline:" key.
_JSON_HIST_RE = re.compile(r"(?:^|\s)(?:-h|--histogram)[= ]?(\d+)|(?:^|\s)(?:-H|--histofall)[= ]?(\d+)")


def clean_line(line: str) -> str:
    """Return ``line`` without terminal escapes, carriage returns, mail quote marks and the blanks
    around it. Raises nothing."""
    return _QUOTE_RE.sub("", _ESCAPE_RE.sub("", line)).strip()


def parse_latency_text(text: str, source: str) -> LatencyRun:
    """Return the latency results in ``text`` (named ``source`` in messages).

    Tries cyclictest's JSON, then rtla, oslat and cyclictest text. Raises InputError for binary data
    or text holding none of them."""
    if "\x00" in text or text.count("\ufffd") > max(16, len(text) // 100):
        raise InputError(f"{source}: binary data, not the text output of cyclictest, oslat or rtla")
    stripped = text.lstrip()
    if stripped.startswith("{") or '"file_version"' in text:
        document = _find_json(text)
        if document is not None:
            return parse_cyclictest_json(document, source)
    lines = [clean_line(line) for line in text.splitlines()]
    series, warnings = parse_rtla_hist(lines)
    if series:
        return LatencyRun(source, "timerlat", tuple(series), _command(lines, "timerlat"), tuple(warnings))
    if oslat := parse_oslat(lines):
        return LatencyRun(source, "oslat", tuple(oslat), None, ())
    series, warnings = parse_cyclictest(lines, source)
    if series:
        return LatencyRun(source, "cyclictest", tuple(series), _command(lines, "cyclictest"), tuple(warnings))
    raise InputError(f"{source}: no cyclictest, oslat or rtla timerlat output found")


def _command(lines: Sequence[str], tool: str) -> str | None:
    for line in lines:
        at = line.find(tool)
        if at >= 0 and ("#" in line[:at] or line.startswith(tool)) and " -" in line[at:]:
            return line[at:]
    return None


def _find_json(text: str) -> dict[str, Any] | None:
    # A pasted JSON file may have prose around it: take the outermost braces.
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        document = json.loads(text[start : end + 1])
    except ValueError:
        return None
    return document if isinstance(document, dict) else None


def _histogram_limit(command: str | None) -> int | None:
    if not command:
        return None
    try:
        words = " " + " ".join(shlex.split(command))
    except ValueError:
        words = " " + command
    match = _JSON_HIST_RE.search(words)
    if not match:
        return None
    return int(match.group(1) or match.group(2))


def parse_cyclictest_json(document: dict[str, Any], source: str) -> LatencyRun:
    """Return the threads of a cyclictest ``--json`` document.

    The JSON has no overflow count: it is the cycles minus the histogram's sum (the issue's rule);
    the histogram's end comes from ``-h``/``-H`` in the stored command line. Raises InputError when
    the document is not cyclictest's."""
    threads = document.get("thread")
    if not isinstance(threads, dict):
        raise InputError(f"{source}: JSON without a 'thread' object: not cyclictest --json output")
    # cyclictest writes "cmdline:" with the colon inside the key; accept both spellings.
    command = document.get("cmdline:", document.get("cmdline"))
    command = str(command) if command is not None else None
    limit_us = _histogram_limit(command)
    series: list[LatencySeries] = []
    for key in sorted(threads, key=lambda k: int(k) if str(k).isdigit() else 0):
        thread = threads[key]
        try:
            buckets = {int(k): int(v) for k, v in dict(thread.get("histogram") or {}).items()}
            cycles = int(thread["cycles"])
        except (KeyError, TypeError, ValueError) as error:
            raise InputError(f"{source}: thread {key}: unreadable cyclictest JSON ({error})") from None
        counts = None
        overflow = 0
        if buckets:
            length = limit_us or max(buckets) + 1
            counts = np.zeros(length, dtype=np.int64)
            for value_us, count in buckets.items():
                if value_us < length:
                    counts[value_us] = count
            overflow = cycles - int(counts.sum())
        cpu = thread.get("cpu")
        series.append(
            LatencySeries(
                tool="cyclictest",
                name=f"T{key}",
                cpu=int(cpu) if isinstance(cpu, int) and cpu >= 0 else None,
                counts=counts,
                overflow=max(overflow, 0),
                limit_us=length if counts is not None else None,
                cycles=cycles,
                min_us=_num(thread.get("min")),
                avg_us=_num(thread.get("avg")),
                max_us=_num(thread.get("max")),
            )
        )
    warnings = (
        ()
        if any(s.counts is not None for s in series)
        else (f"{source}: no histogram in the JSON (run cyclictest with -h N): no quantiles",)
    )
    return LatencyRun(source, "cyclictest", tuple(series), command, warnings)


def _num(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None

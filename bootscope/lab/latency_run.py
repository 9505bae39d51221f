"""One latency measurement's settings, command lines and record.

The tool's command line comes from :class:`LatencySettings` (cyclictest the way practitioners run
it: ``-m -S -p 95 -i 200 -h H --mainaffinity 0``, its text histogram and its ``--json`` kept); the
load's from :data:`LOAD_ARGV`. Where the tool runs (this machine, a QEMU guest) is
:mod:`bootscope.lab.latency_place`; what it printed comes back as a transcript
(:mod:`bootscope.parse.latency_transcript`) from which :func:`record_from_transcript` computes the
stored record. The record's log is the whole transcript, so analysis can be redone.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, replace

from bootscope import metrics
from bootscope.analyze.latency import LatencyRow, summarize_run
from bootscope.errors import BootError, InputError
from bootscope.latency_model import LatencyRun
from bootscope.model import LogLine, Outcome
from bootscope.parse.latency import parse_latency_text
from bootscope.parse.latency_transcript import Transcript, split_transcript
from bootscope.store.records import BootRecord

TOOLS = ("cyclictest", "oslat", "timerlat")
LOADS = ("none", "hackbench", "stress-ng")
TOOL_ERROR = "tool-error"  # a record's outcome when the tool failed or printed nothing readable
JSON_SUFFIX = "--json="


@dataclass(frozen=True, slots=True)
class LatencySettings:
    """How one variant runs its tool: ``duration_s`` per run, wake-up ``interval_us``, real-time
    ``priority``, ``histogram_us`` buckets (1 us each; slower samples are overflow), ``threads``
    (None: one per CPU, cyclictest's ``-S``), ``affinity`` (a CPU list for the measuring threads,
    None: one per CPU), ``main_cpu`` (the housekeeping CPU of cyclictest's main thread, None: any)
    and the background ``load``."""

    tool: str = "cyclictest"
    duration_s: int = 60
    interval_us: int = 200
    priority: int = 95
    histogram_us: int = 400
    threads: int | None = None
    affinity: str | None = None
    main_cpu: int | None = 0
    load: str = "none"


def check_settings(settings: LatencySettings) -> None:
    """Raise InputError for an unknown tool or load, or numbers out of range."""
    if settings.tool not in TOOLS:
        raise InputError(f"unknown latency tool {settings.tool!r}; use {', '.join(TOOLS)}")
    if settings.load not in LOADS:
        raise InputError(f"unknown load {settings.load!r}; use {', '.join(LOADS)}")
    if settings.duration_s < 1 or settings.interval_us < 1 or settings.histogram_us < 1:
        raise InputError("duration, interval and histogram must be at least 1")
    if settings.tool == "oslat" and not 4 <= settings.histogram_us <= 1024:
        raise InputError(f"oslat takes 4..1024 histogram buckets (-b), not {settings.histogram_us}")
    if not 1 <= settings.priority <= 99:
        raise InputError(f"priority must lie in 1..99, not {settings.priority}")


def tool_argv(settings: LatencySettings, json_path: str | None = None) -> tuple[str, ...]:
    """Return the tool's command line; cyclictest writes ``--json`` to ``json_path`` when given.
    Raises InputError for an unknown tool."""
    check_settings(settings)
    if settings.tool == "cyclictest":
        argv = ["cyclictest", "-m", "-p", str(settings.priority), "-i", str(settings.interval_us)]
        if settings.threads is None and settings.affinity is None:
            argv.insert(1, "-S")  # one thread per CPU, each pinned, all at one priority
        else:
            argv += [f"--threads={settings.threads}"] if settings.threads else ["-t"]
            if settings.affinity:
                argv.append(f"--affinity={settings.affinity}")
        if settings.main_cpu is not None:
            argv.append(f"--mainaffinity={settings.main_cpu}")
        argv += ["-D", f"{settings.duration_s}s", "-h", str(settings.histogram_us), "-q"]
        if json_path:
            argv.append(f"{JSON_SUFFIX}{json_path}")
        return tuple(argv)
    if settings.tool == "oslat":
        argv = ["oslat", "-D", f"{settings.duration_s}s", "-f", str(settings.priority)]
        argv += ["-b", str(settings.histogram_us)]
        if settings.affinity:
            argv += ["-c", settings.affinity]
        return tuple(argv)
    # rtla timerlat hist: -p period (us), -P f:PRIO (SCHED_FIFO), -E buckets of 1 us, -d duration.
    argv = ["rtla", "timerlat", "hist", "-d", str(settings.duration_s), "-p", str(settings.interval_us)]
    argv += ["-P", f"f:{settings.priority}", "-E", str(settings.histogram_us)]
    if settings.affinity:
        argv += ["-c", settings.affinity]
    return tuple(argv)


def load_argv(load: str, cpus: int) -> tuple[str, ...] | None:
    """Return the command line of background ``load`` for a machine of ``cpus`` CPUs (None for
    ``none``): hackbench's default 10 groups of 40 tasks passing 512-byte messages, or stress-ng with
    one CPU worker per CPU. Raises InputError for an unknown load."""
    if load not in LOADS:
        raise InputError(f"unknown load {load!r}; use {', '.join(LOADS)}")
    if load == "none":
        return None
    if load == "hackbench":
        return ("hackbench", "-l", "100000000", "-s", "512")
    return ("stress-ng", "--cpu", str(max(cpus, 1)), "--timeout", "0")


def command_text(argv: Sequence[str]) -> str:
    """Return ``argv`` as one shell-quoted line."""
    return shlex.join(argv)


def preemption_from(sched_preempt: str | None, uname_version: str | None) -> str | None:
    """Return the preemption model: the bracketed word of ``/sys/kernel/debug/sched/preempt``
    (``full`` in ``none voluntary (full)``), else PREEMPT_RT/PREEMPT_DYNAMIC/PREEMPT from ``uname -v``,
    None if neither says."""
    if sched_preempt and "(" in sched_preempt and ")" in sched_preempt:
        return sched_preempt[sched_preempt.index("(") + 1 : sched_preempt.index(")")]
    words = (uname_version or "").split()
    for word in ("PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT"):
        if word in words:
            return word
    return None


def _worst(rows: Sequence[LatencyRow], p: float) -> float | None:
    """The largest per-thread p-quantile, None when any thread cannot resolve it (too few cycles,
    or in the overflow): a tail the run does not show is never a number."""
    values = [q for row in rows for q in row.quantiles if q.p == p]
    if not values or any(q.value_us is None or not q.resolvable for q in values):
        return None
    return float(max(q.value_us for q in values if q.value_us is not None))


def run_metrics(run: LatencyRun) -> dict[str, float | None]:
    """Return a run's stored metrics (us): the worst thread's max, p99, p99.9 and p99.99."""
    rows = summarize_run(run)
    worst_max = max((row.max_us for row in rows if row.max_us is not None), default=None)
    return {
        metrics.LATENCY_MAX_US: worst_max,
        metrics.LATENCY_P99_US: _worst(rows, 0.99),
        metrics.LATENCY_P999_US: _worst(rows, 0.999),
        metrics.LATENCY_P9999_US: _worst(rows, 0.9999),
    }


def parse_tool_section(transcript: Transcript, source: str) -> LatencyRun:
    """Return the run in the transcript's ``tool`` section (the text output: it has the overflow
    counts that cyclictest's JSON lacks). Raises InputError when it holds nothing readable."""
    text = transcript.text("tool")
    if not text.strip():
        raise InputError(f"{source}: the tool printed nothing")
    return parse_latency_text(text, source)


def record_from_transcript(
    lines: Sequence[LogLine], variant: str, index: int, warmup: bool, command: tuple[str, ...]
) -> BootRecord:
    """Return the record of one measurement from its transcript ``lines``: outcome ``ok`` with the
    metrics when the tool ran and its output parses, else ``tool-error`` (or ``timeout`` when the
    transcript ends before the tool's exit status) with the reason."""
    transcript = split_transcript(line.text for line in lines)
    facts = transcript.facts()
    base = BootRecord(
        variant=variant, index=index, warmup=warmup, outcome=Outcome.OK.value, command=command,
        kernel_release=facts.get("kernel_release") or None,
    )  # fmt: skip
    status = transcript.exit_status()
    tail = transcript.text("tool").strip()[-200:]
    if status is None:
        return _failed(base, Outcome.TIMEOUT.value, "the transcript ends before the tool's exit status")
    if status != 0:
        return _failed(base, TOOL_ERROR, f"{command[0] if command else 'tool'} exited with {status}: {tail}")
    try:
        run = parse_tool_section(transcript, f"{variant}#{index}")
    except (InputError, BootError) as error:
        return _failed(base, TOOL_ERROR, str(error))
    return replace(base, metrics=run_metrics(run))


def _failed(record: BootRecord, outcome: str, reason: str) -> BootRecord:
    return replace(record, outcome=outcome, reason=reason)

"""One latency measurement's record: the transcript a place printed (the facts, the tool's output and
exit status, :mod:`bootscope.parse.latency_transcript`) read into the stored record and its metrics.
The record's log is the whole transcript, so analysis can be redone. The tool's settings and command
lines are :mod:`bootscope.lab.plans.latency_tools`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from bootscope import metrics
from bootscope.analyze.latency import LatencyRow, summarize_run
from bootscope.errors import BootError, InputError
from bootscope.latency_model import LatencyRun
from bootscope.model import LogLine, Outcome
from bootscope.parse.latency import parse_latency_text
from bootscope.parse.latency_transcript import Transcript, split_transcript
from bootscope.store.records import BootRecord

TOOL_ERROR = "tool-error"  # a record's outcome when the tool failed or printed nothing readable


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

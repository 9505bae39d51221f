"""One latency measurement: the tool's command line from the settings, load around it, the output
parsed into a record whose log lines are the whole tool output (so analysis can be redone).

Not yet a Workload on the runner (see the README's Latency section): this is the slot body that
a ``LatencyWorkload.run_slot`` will call.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from bootscope import metrics
from bootscope.analyze.latency import summarize_run
from bootscope.errors import BootError
from bootscope.lab.localhost import CommandTarget
from bootscope.latency_model import LatencyRun
from bootscope.model import LogLine
from bootscope.parse.latency import parse_latency_text
from bootscope.store.records import BootRecord


@dataclass(frozen=True, slots=True)
class LatencySettings:
    """How one variant runs its tool: duration in s, interval in us, priority, histogram end in us."""

    tool: str = "cyclictest"
    duration_s: int = 5
    interval_us: int = 200
    priority: int = 95
    histogram_us: int = 400
    load: str = "none"


def tool_argv(settings: LatencySettings) -> tuple[str, ...]:
    """Return the tool's command line (cyclictest the way practitioners run it, with a histogram).
    Raises BootError for an unknown tool."""
    if settings.tool == "cyclictest":
        return (
            "cyclictest", "-m", "-S", "-p", str(settings.priority), "-i", str(settings.interval_us),
            "-D", str(settings.duration_s), "-h", str(settings.histogram_us), "-q",
        )  # fmt: skip
    if settings.tool == "oslat":
        return ("oslat", "-D", str(settings.duration_s))
    raise BootError(f"unknown latency tool {settings.tool!r}; use cyclictest or oslat")


def measure_once(
    target: CommandTarget, settings: LatencySettings, variant: str, index: int
) -> tuple[BootRecord, list[LogLine], LatencyRun]:
    """Run the tool once under its load on ``target``; return the record (metrics in us), the tool's
    output as log lines and the parsed run. Raises BootError when the tool fails or prints nothing
    readable."""
    argv = tool_argv(settings)
    handle = target.start_load(settings.load)
    try:
        result = target.run_command(argv, timeout_s=settings.duration_s + 60)
    finally:
        target.stop_load(handle)
    if result.returncode != 0:
        raise BootError(f"{argv[0]} exited with {result.returncode}: {result.output.strip()[-200:]}")
    run = parse_latency_text(result.output, f"{variant}#{index}")
    rows = summarize_run(run)
    worst_max = max((row.max_us for row in rows if row.max_us is not None), default=None)

    def worst(p: float) -> float | None:
        values = [q.value_us for row in rows for q in row.quantiles if q.p == p]
        if not values or any(v is None for v in values):
            return None  # in some thread's overflow: not a number
        return float(max(v for v in values if v is not None))

    record = BootRecord(
        variant=variant,
        index=index,
        warmup=False,
        outcome="ok",
        command=argv,
        kernel_release=os.uname().release,
        metrics={metrics.LATENCY_MAX_US: worst_max, metrics.LATENCY_P99_US: worst(0.99),
                 metrics.LATENCY_P999_US: worst(0.999)},
    )  # fmt: skip
    lines = [LogLine(text=line) for line in result.output.splitlines()]
    return record, lines, run

"""One LatencyRun in, one row per measuring thread out: cycles, the tool's min/avg/max and the tail
quantiles with their distribution-free intervals (computed in :mod:`bootscope.stats.latency`)."""

from __future__ import annotations

from dataclasses import dataclass

from bootscope.latency_model import LatencyRun, LatencySeries
from bootscope.stats.latency import QuantileEstimate, histogram_quantile

QUANTILES = (0.5, 0.99, 0.999, 0.9999)


@dataclass(frozen=True, slots=True)
class LatencyRow:
    """One thread's summary. ``quantiles`` is empty without a histogram; ``limit_us`` is where the
    histogram ends (a quantile in the overflow is ``> limit_us``)."""

    source: str
    tool: str
    name: str
    cpu: int | None
    cycles: int | None
    min_us: float | None
    avg_us: float | None
    max_us: float | None
    overflow: int
    limit_us: int | None
    quantiles: tuple[QuantileEstimate, ...]


def summarize_series(series: LatencySeries, source: str, confidence: float = 0.95) -> LatencyRow:
    """Return the row for one series; quantiles only when it has a non-empty histogram."""
    quantiles: tuple[QuantileEstimate, ...] = ()
    if series.counts is not None and series.total > 0:
        quantiles = tuple(
            histogram_quantile(series.counts, series.overflow, p, confidence) for p in QUANTILES
        )
    return LatencyRow(
        source=source,
        tool=series.tool,
        name=series.name,
        cpu=series.cpu,
        cycles=series.cycles,
        min_us=series.min_us,
        avg_us=series.avg_us,
        max_us=series.max_us,
        overflow=series.overflow,
        limit_us=series.limit_us,
        quantiles=quantiles,
    )


def summarize_run(run: LatencyRun, confidence: float = 0.95) -> list[LatencyRow]:
    """Return one row per series of ``run``, in the tool's order."""
    return [summarize_series(series, run.source, confidence) for series in run.series]

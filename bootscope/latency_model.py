"""Frozen dataclasses that latency data travels in, from ``parse/latency*`` to ``analyze/latency``.

Latencies are whole microseconds, as cyclictest, oslat and rtla print them. ``None`` means "the
output did not say".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True, eq=False)
class LatencySeries:
    """One measuring thread's results (a cyclictest thread, an oslat core, an rtla IRQ/Thr column).

    ``counts`` holds, at index ``i``, how many samples were ``i`` us (None: the output had no
    histogram); ``overflow`` counts samples at or above ``limit_us`` (the histogram's end), which the
    histogram does not resolve. ``cycles`` is the tool's own sample count, ``min_us``/``avg_us``/
    ``max_us`` its own summary; ``overflow_cycles`` the cycle numbers cyclictest listed for overflows.
    """

    tool: str
    name: str
    cpu: int | None
    counts: IntArray | None = None
    overflow: int = 0
    limit_us: int | None = None
    cycles: int | None = None
    min_us: float | None = None
    avg_us: float | None = None
    max_us: float | None = None
    interval_us: int | None = None
    priority: int | None = None
    overflow_cycles: tuple[int, ...] = ()

    @property
    def total(self) -> int:
        """Return the number of samples the histogram covers, overflow included (0 without one)."""
        if self.counts is None:
            return 0
        return int(self.counts.sum()) + self.overflow


@dataclass(frozen=True, slots=True, eq=False)
class LatencyRun:
    """What one tool output held: the tool, its command line if printed, one series per thread."""

    source: str
    tool: str
    series: tuple[LatencySeries, ...]
    command: str | None = None
    warnings: tuple[str, ...] = field(default=())

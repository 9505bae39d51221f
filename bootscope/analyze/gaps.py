"""A boot's largest silences: the gaps between consecutive timed lines, measured from the latest time
seen, the ``top_n`` longest kept as a bounded min-heap fed in log order keeps them. One walk over
Python lists (the line path) and its numpy twin over arrays (the block scan), held equal by
tests/parse/test_chunked.py.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

from bootscope.model import Gap
from bootscope.parse.columns import BootColumns

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


def top_gaps(cols: BootColumns, top_n: int) -> tuple[tuple[Gap, ...], float]:
    """Return the ``top_n`` largest gaps (longest first) and the highest guest time seen (s).

    A gap is measured from the latest time seen, so a line that steps back (an AP's unsynchronised
    clock) neither hides nor invents a silence. Equal gaps are chosen as a bounded min-heap fed in
    log order would choose them (the per-line implementation this replaced).
    """
    times = cols.timed_s
    if not len(times):
        return (), float("-inf")
    if isinstance(times, list):
        heap, high_s = _gap_heap_walk(times, top_n)
    else:
        heap, high_s = _gap_heap_arrays(times, top_n)
    index = cols.timed_index
    found = tuple(
        Gap(float(times[b]), duration, cols.line(int(index[b])).text, cols.line(int(index[a])).text)
        for duration, b, a in sorted(heap, key=lambda item: (-item[0], item[1]))
    )
    return found, high_s


# (gap s, timed position where it starts, timed position where it ends): a min-heap of the largest
GapHeap = list[tuple[float, int, int]]


def _gap_heap_walk(times: list[float], top_n: int) -> tuple[GapHeap, float]:
    """The gap heap and the highest time of a list of times: the walk in log order itself."""
    heap: GapHeap = []
    high_s = times[0]
    last = 0
    for position in range(1, len(times)):
        t = times[position]
        if not t > high_s:
            continue
        _offer(heap, (t - high_s, last, position), top_n)
        high_s, last = t, position
    return heap, high_s


def _offer(heap: GapHeap, item: tuple[float, int, int], top_n: int) -> None:
    """Feed one gap to the bounded min-heap of the ``top_n`` largest (a tie does not evict)."""
    if len(heap) < top_n:
        heapq.heappush(heap, item)
    elif item[0] > heap[0][0]:
        heapq.heapreplace(heap, item)


def _gap_heap_arrays(times: npt.NDArray[np.float64], top_n: int) -> tuple[GapHeap, float]:
    """The gap heap and the highest time of a numpy array of times, as ``_gap_heap_walk`` finds them."""
    import numpy as np

    # The lines that raise the high-water mark; every gap runs between two consecutive ones.
    high = np.maximum.accumulate(times)
    raises = np.flatnonzero(np.concatenate(([True], times[1:] > high[:-1])))
    durations = np.diff(times[raises])
    if len(durations) > top_n:
        # Only gaps at least as long as the N-th longest can survive the heap; feeding just those
        # in order gives the heap's result (a shorter gap is always evicted before a longer one).
        threshold = np.partition(durations, len(durations) - top_n)[len(durations) - top_n]
        candidates = np.flatnonzero(durations >= threshold)
    else:
        candidates = np.arange(len(durations))
    heap: GapHeap = []
    for k in candidates.tolist():
        _offer(heap, (float(durations[k]), int(raises[k]), int(raises[k + 1])), top_n)
    return heap, float(high[-1])

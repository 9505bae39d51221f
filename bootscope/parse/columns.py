"""One boot as columns: what the analysis reads, found either per line or by scanning a whole block.

``BootColumns`` is the analysis' only view of a boot's lines. ``columns_from_lines`` fills it from
parsed LogLines (any format, a line at a time); ``bootscope.parse.chunked`` fills it from a dmesg text
block with a few scans in C. Both give the same columns for the same log, so the analysis code exists
once (bootscope/analyze/breakdown.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter

import numpy as np
import numpy.typing as npt

from bootscope.model import LogLine
from bootscope.parse.patterns import COMBINED, GROUP_SLICES

# Fields of one initcall_debug line, in the order a scan of both initcall patterns yields them:
# (calling: name, module, pid, returned: name, module, ret, usecs); the other kind's fields are "".
InitcallRow = tuple[str, str, str, str, str, str, str]
# (pattern name, line index, the pattern's groups, the line's guest time in s or None)
KnownLine = tuple[str, int, tuple[str | None, ...], float | None]

INITCALL_PATTERNS = ("initcall_start", "initcall_done")
_EMPTY3 = ("", "", "")
_EMPTY4 = ("", "", "", "")
_GUEST_S = attrgetter("guest_s")
_TEXT = attrgetter("text")


@dataclass(frozen=True, slots=True)
class BootColumns:
    """One boot's lines as the analysis needs them.

    ``timed_index`` (line indices, ascending) and ``timed_s`` (guest seconds) describe the lines that
    carry a kernel timestamp; ``known`` holds the lines the pattern table knows except initcall lines,
    which are in ``initcall_rows`` with their guest times in ``initcall_s`` (None if untimed).
    ``line(i)`` returns the whole LogLine of line ``i`` (built on demand on the fast path).
    """

    line_count: int
    timed_index: npt.NDArray[np.int64]
    timed_s: npt.NDArray[np.float64]
    known: Sequence[KnownLine]
    initcall_rows: Sequence[InitcallRow]
    initcall_s: Sequence[float | None]
    line: Callable[[int], LogLine]


def columns_from_lines(lines: Sequence[LogLine]) -> BootColumns:
    """Return the columns of one boot's parsed lines (one anchored match of the pattern table per line)."""
    times: list[float | None] = list(map(_GUEST_S, lines))
    timed = [i for i, t in enumerate(times) if t is not None]
    known: list[KnownLine] = []
    rows: list[InitcallRow] = []
    row_s: list[float | None] = []
    slices = GROUP_SLICES
    for index, m in enumerate(map(COMBINED.match, map(_TEXT, lines))):
        if m is None or m.lastgroup is None:
            continue
        name = m.lastgroup
        first, last = slices[name]
        groups = m.groups()[first:last]
        if name in INITCALL_PATTERNS:
            fields = tuple(group or "" for group in groups)
            rows.append((*fields, *_EMPTY4) if name == "initcall_start" else (*_EMPTY3, *fields))  # type: ignore[arg-type]
            row_s.append(times[index])
        else:
            known.append((name, index, groups, times[index]))
    return BootColumns(
        line_count=len(lines),
        timed_index=np.array(timed, dtype=np.int64),
        timed_s=np.array([times[i] for i in timed], dtype=np.float64),
        known=known,
        initcall_rows=rows,
        initcall_s=row_s,
        line=lines.__getitem__,
    )

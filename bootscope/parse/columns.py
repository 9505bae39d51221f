"""One boot as columns: what the analysis reads, found either per line or by scanning a whole block.

``BootColumns`` is the analysis' only view of a boot's lines. ``columns_from_lines`` fills it from
parsed LogLines (any format, a line at a time); ``bootscope.parse.chunked`` fills it from a dmesg text
block with a few scans in C. Both give the same columns for the same log, so the analysis code exists
once (bootscope/analyze/breakdown.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import compress, count
from operator import attrgetter

import numpy as np
import numpy.typing as npt

from bootscope.model import LogLine
from bootscope.parse.patterns import COMBINED, GROUP_SLICES

# Fields of one initcall_debug line as INITCALL_SCAN's groups hold them: (call, name, module, pid,
# ret, usecs), call "c" for a calling line, "" for a returned one; fields not printed are "".
InitcallRow = tuple[str, str, str, str, str, str]
# (pattern name, line index, the pattern's groups, the line's guest time in s or None)
KnownLine = tuple[str, int, tuple[str | None, ...], float | None]

INITCALL_PATTERNS = ("initcall_start", "initcall_done")
_GUEST_S = attrgetter("guest_s")
_TEXT = attrgetter("text")


@dataclass(frozen=True, slots=True)
class InitcallColumns:
    """Initcall lines (a ``calling`` or a ``returned`` each) in log order, as columns.

    ``names``, ``modules`` ("" where not printed), ``pids`` (a calling's, else "") and ``rets`` (a
    returned's, else "") are the line's fields as text; ``durations_us`` holds one int per returned
    line (in order); ``name_ids`` are equal exactly where names are equal; ``times_s`` are guest
    seconds (NaN if untimed); ``failing`` marks the returned lines whose return code is not 0.
    """

    names: Sequence[str]
    modules: Sequence[str]
    pids: Sequence[str]
    rets: Sequence[str]
    is_call: npt.NDArray[np.bool_]
    name_ids: npt.NDArray[np.int64]
    times_s: npt.NDArray[np.float64]
    durations_us: Sequence[int]
    failing: npt.NDArray[np.bool_]
    done_before: npt.NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.names)

    def slice(self, lo: int, hi: int) -> InitcallColumns:
        """Return lines ``lo``..``hi`` (row indices) as InitcallColumns."""
        d0, d1 = int(self.done_before[lo]), int(self.done_before[hi])
        return InitcallColumns(
            names=self.names[lo:hi],
            modules=self.modules[lo:hi],
            pids=self.pids[lo:hi],
            rets=self.rets[lo:hi],
            is_call=self.is_call[lo:hi],
            name_ids=self.name_ids[lo:hi],
            times_s=self.times_s[lo:hi],
            durations_us=self.durations_us[d0:d1],
            failing=self.failing[lo:hi],
            done_before=self.done_before[lo : hi + 1] - d0,
        )


def initcall_columns(rows: Sequence[InitcallRow], times_s: npt.NDArray[np.float64]) -> InitcallColumns:
    """Return initcall rows (as INITCALL_SCAN's groups, in log order) at ``times_s`` (s) as columns.

    Raises nothing: the rows' numeric fields are digits by the pattern.
    """
    n = len(rows)
    calls, names, modules, pids, rets, usecs = zip(*rows, strict=True) if n else ((),) * 6
    is_call = np.fromiter(map(bool, calls), dtype=bool, count=n)
    first_seen: dict[str, int] = {}
    name_ids = np.fromiter(map(first_seen.setdefault, names, count()), np.int64, n)
    durations_us = list(map(int, compress(usecs, map(bool, usecs))))
    # "0" is the usual return; any other text is checked as a number (it may be "-0" or "00")
    odd_ret = np.flatnonzero(np.fromiter(map("0".__ne__, rets), dtype=bool, count=n) & ~is_call)
    failing = np.zeros(n, dtype=bool)
    failing[[i for i in odd_ret.tolist() if int(rets[i])]] = True
    done_before = np.concatenate(([0], np.cumsum(~is_call)))
    return InitcallColumns(
        names=names,
        modules=modules,
        pids=pids,
        rets=rets,
        is_call=is_call,
        name_ids=name_ids,
        times_s=times_s,
        durations_us=durations_us,
        failing=failing,
        done_before=done_before,
    )


@dataclass(frozen=True, slots=True)
class BootColumns:
    """One boot's lines as the analysis needs them.

    ``timed_index`` (line indices, ascending) and ``timed_s`` (guest seconds) describe the lines that
    carry a kernel timestamp; ``known`` holds the lines the pattern table knows except initcall lines,
    which are in ``initcalls``.
    ``line(i)`` returns the whole LogLine of line ``i`` (built on demand on the fast path).
    ``maybe_userspace`` (ascending line indices), where known, holds every line that can be a
    userspace line (no kernel stamp, or a prefix that may carry a facility); None: any line can.
    """

    line_count: int
    timed_index: npt.NDArray[np.int64]
    timed_s: npt.NDArray[np.float64]
    known: Sequence[KnownLine]
    initcalls: InitcallColumns
    line: Callable[[int], LogLine]
    maybe_userspace: npt.NDArray[np.int64] | None = None


def columns_from_lines(lines: Sequence[LogLine]) -> BootColumns:
    """Return the columns of one boot's parsed lines (one anchored match of the pattern table per line)."""
    times: list[float | None] = list(map(_GUEST_S, lines))
    timed = [i for i, t in enumerate(times) if t is not None]
    known: list[KnownLine] = []
    rows: list[InitcallRow] = []
    row_s: list[float] = []
    slices = GROUP_SLICES
    for index, m in enumerate(map(COMBINED.match, map(_TEXT, lines))):
        if m is None or m.lastgroup is None:
            continue
        name = m.lastgroup
        first, last = slices[name]
        groups = m.groups()[first:last]
        if name == "initcall_start":
            rows.append(("c", groups[0] or "", groups[1] or "", groups[2] or "", "", ""))
        elif name == "initcall_done":
            rows.append(("", groups[0] or "", groups[1] or "", "", groups[2] or "", groups[3] or ""))
        if name in INITCALL_PATTERNS:
            t = times[index]
            row_s.append(np.nan if t is None else t)
        else:
            known.append((name, index, groups, times[index]))
    return BootColumns(
        line_count=len(lines),
        timed_index=np.array(timed, dtype=np.int64),
        timed_s=np.array([times[i] for i in timed], dtype=np.float64),
        known=known,
        initcalls=initcall_columns(rows, np.array(row_s, dtype=np.float64)),
        line=lines.__getitem__,
    )

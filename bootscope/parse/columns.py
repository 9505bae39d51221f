"""One boot as columns: what the analysis reads, found either per line or by scanning a whole block.

``BootColumns`` is the analysis' only view of a boot's lines. ``columns_from_lines`` fills it from
parsed LogLines (any format, a line at a time) with Python lists; ``bootscope.parse.chunked`` fills
it from a dmesg text block with a few scans in C, with numpy arrays. Both give the same columns for
the same log. The analysis reads either kind: where it computes on a whole column it has a numpy
form and a plain twin for lists, proven equal by tests (tests/analyze/test_initcall_pairing.py,
tests/parse/test_chunked.py's largest gaps, tests/sources/test_line_ends.py). The line
path never imports numpy, so a small log is analysed without numpy's import (about 50 ms,
bench/RESULTS.md start-up).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate, compress, count
from operator import attrgetter
from typing import TYPE_CHECKING

from bootscope.model import LogLine
from bootscope.parse.patterns import COMBINED, GROUP_SLICES, initcall_duration_us

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    # a column: a numpy array (the block scan) or a list (the line path)
    Bools = npt.NDArray[np.bool_] | list[bool]
    Ints = npt.NDArray[np.int64] | list[int]
    Floats = npt.NDArray[np.float64] | list[float]

# Fields of one initcall_debug line as INITCALL_SCAN's groups hold them: (call, name, module, pid,
# ret, usecs), call "c" for a calling line, "" for a returned one; fields not printed are "";
# usecs already in us where the line said msecs.
InitcallRow = tuple[str, str, str, str, str, str]
# (pattern name, line index, the pattern's groups, the line's guest time in s or None)
KnownLine = tuple[str, int, tuple[str | None, ...], float | None]

INITCALL_PATTERNS = ("initcall_start", "initcall_done")
_GUEST_S = attrgetter("guest_s")
_NAN = float("nan")
_TEXT = attrgetter("text")


@dataclass(frozen=True, slots=True)
class InitcallColumns:
    """Initcall lines (a ``calling`` or a ``returned`` each) in log order, as columns.

    ``names``, ``modules`` ("" where not printed), ``pids`` (a calling's, else "") and ``rets`` (a
    returned's, else "") are the line's fields as text; ``durations_us`` holds one int per returned
    line (in order); ``name_ids`` are equal exactly where names are equal; ``times_s`` are guest
    seconds (NaN if untimed); ``failing`` marks the returned lines whose return code is not 0;
    ``done_before[i]`` counts the returned lines before row ``i`` (one more entry than rows). The
    columns are numpy arrays from the block scan, lists from ``initcall_columns``.
    """

    names: Sequence[str]
    modules: Sequence[str]
    pids: Sequence[str]
    rets: Sequence[str]
    is_call: Bools
    name_ids: Ints
    times_s: Floats
    durations_us: Sequence[int]
    failing: Bools
    done_before: Ints

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
            done_before=[d - d0 for d in self.done_before[lo : hi + 1]]
            if isinstance(self.done_before, list)
            else self.done_before[lo : hi + 1] - d0,
        )


def initcall_columns(rows: Sequence[InitcallRow], times_s: list[float]) -> InitcallColumns:
    """Return initcall rows (as INITCALL_SCAN's groups, in log order) at ``times_s`` (s, NaN where
    untimed) as columns of Python lists.

    Raises nothing: the rows' numeric fields are digits by the pattern.
    """
    n = len(rows)
    calls, names, modules, pids, rets, usecs = zip(*rows, strict=True) if n else ((),) * 6
    is_call = list(map(bool, calls))
    first_seen: dict[str, int] = {}
    name_ids = list(map(first_seen.setdefault, names, count()))
    durations_us = list(map(int, compress(usecs, map(bool, usecs))))
    # "0" is the usual return; any other text is checked as a number (it may be "-0" or "00")
    failing = [not call and ret != "0" and int(ret) != 0 for call, ret in zip(is_call, rets, strict=True)]
    done_before = [0, *accumulate(not call for call in is_call)]
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
    timed_index: Ints
    timed_s: Floats
    known: Sequence[KnownLine]
    initcalls: InitcallColumns
    line: Callable[[int], LogLine]
    maybe_userspace: Ints | None = None


def columns_from_lines(lines: Sequence[LogLine]) -> BootColumns:
    """Return the columns (Python lists) of one boot's parsed lines (one anchored match of the
    pattern table per line)."""
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
            usecs = str(initcall_duration_us(groups[3] or "", groups[4]))
            rows.append(("", groups[0] or "", groups[1] or "", "", groups[2] or "", usecs))
        if name in INITCALL_PATTERNS:
            t = times[index]
            row_s.append(_NAN if t is None else t)
        else:
            known.append((name, index, groups, times[index]))
    return BootColumns(
        line_count=len(lines),
        timed_index=timed,
        timed_s=[times[i] for i in timed],  # type: ignore[misc]
        known=known,
        initcalls=initcall_columns(rows, row_s),
        line=lines.__getitem__,
    )

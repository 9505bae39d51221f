"""Initcalls from ``initcall_debug`` (init/main.c): pair each ``calling`` with its ``returned``.

The pairing is that of a walk through the lines with a dict of open calls by name (a ``calling``
opens or replaces its name's entry, a ``returned`` pops it). On the block scan's numpy columns it is
computed on arrays (``_pair_arrays``); on the line path's lists by that walk itself (``_pair_walk``):
the same pairs (tests/analyze/test_initcall_pairing.py). Python objects are built only for the calls
the summary shows.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bootscope.model import Initcall, InitcallSummary
from bootscope.parse.columns import InitcallColumns

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    IntArray = npt.NDArray[np.int64]

# (rows of the returned lines; each row's calling row or -1; rows of the callings still open at the
# end, in the order their names were opened; indices among the returned lines of the failing ones):
# the first two are numpy arrays on the array path, lists on the walk
Pairing = tuple["IntArray | list[int]", "IntArray | list[int]", list[int], list[int]]


def summarize_initcalls(calls: InitcallColumns, top_n: int, *, keep_all: bool = True) -> InitcallSummary:
    """Return counts, total (s), failures (non-zero returns), calls that never returned and the top N.

    ``calls`` are one boot's initcall lines in log order. A ``returned`` takes its start from the
    latest ``calling`` of its name not yet returned; without one it starts ``duration`` before its
    own line (not before 0). ``unfinished`` is in the order the names were opened. ``keep_all``
    False leaves ``all`` empty. Ties in duration keep log order. Raises nothing.
    """
    n = len(calls)
    if n == 0:
        return InitcallSummary(0, 0.0, (), (), (), ())
    plain = isinstance(calls.is_call, list)
    done_rows, start_row, unfinished, failed = _pair_walk(calls) if plain else _pair_arrays(calls)
    durations_us = calls.durations_us
    names, modules, pids, rets = calls.names, calls.modules, calls.pids, calls.rets
    times, failing = calls.times_s, calls.failing

    def done_calls(picked: Sequence[int]) -> tuple[Initcall, ...]:
        """The returned lines ``picked`` (indices among returned lines) as Initcalls, read in one
        batch: a returned line takes its pid and module from its calling where it has one."""
        if not len(picked):
            return ()
        rows = _gather(done_rows, list(picked))
        starts = _gather(start_row, rows)
        start_src = [start if start >= 0 else row for start, row in zip(starts, rows, strict=True)]
        start_times, own_times = _gather(times, start_src), _gather(times, rows)
        start_pids, start_modules = _pick(pids, start_src), _pick(modules, start_src)
        own_names, own_modules = _pick(names, rows), _pick(modules, rows)
        failing_rows = _gather(failing, rows)
        found = []
        for n, k in enumerate(picked):
            start_s: float | None = None
            start_pid: int | None = None
            module = ""
            if starts[n] >= 0:
                t_start = start_times[n]
                if t_start == t_start:
                    start_s = t_start
                pid = start_pids[n]
                start_pid = int(pid) if pid else None
                module = start_modules[n]
            duration_us = durations_us[k]
            if start_s is None:
                t = own_times[n]
                if t == t:
                    start_s = max(t - duration_us / 1e6, 0.0)
            # a return that is not failing is 0 whatever its text ("0", "-0", "00")
            ret = int(rets[rows[n]]) if failing_rows[n] else 0
            found.append(
                Initcall(own_names[n], start_s, duration_us, ret, start_pid, module or own_modules[n] or None)
            )
        return tuple(found)

    def open_call(i: int) -> Initcall:
        t = float(times[i])
        pid = int(pids[i]) if pids[i] else None
        return Initcall(names[i], None if t != t else t, None, None, pid, modules[i] or None)

    done_count = len(done_rows)
    open_calls = tuple(map(open_call, unfinished))
    top = _top(durations_us, top_n, plain=plain)
    return InitcallSummary(
        count=done_count + len(open_calls),
        total_s=sum(durations_us) / 1e6,
        failed=done_calls(failed),
        unfinished=open_calls,
        top=done_calls(top),
        all=(*done_calls(range(done_count)), *open_calls) if keep_all else (),
    )


def _pair_walk(calls: InitcallColumns) -> Pairing:
    """The pairing of list columns: the walk with a dict of open calls itself."""
    opened: dict[int, int] = {}  # name id -> row of its open calling
    done_rows: list[int] = []
    failed: list[int] = []
    start_row = [-1] * len(calls)
    failing = calls.failing
    for row, (called, name_id) in enumerate(zip(calls.is_call, calls.name_ids, strict=True)):
        if called:
            opened[name_id] = row  # a name opened again keeps its place in the dict
            continue
        if failing[row]:
            failed.append(len(done_rows))
        done_rows.append(row)
        start_row[row] = opened.pop(name_id, -1)
    return done_rows, start_row, list(opened.values()), failed


def _pair_arrays(calls: InitcallColumns) -> Pairing:
    """The pairing of numpy columns, computed on arrays (no loop over the lines)."""
    import numpy as np

    is_call = np.asarray(calls.is_call)
    name_ids = np.asarray(calls.name_ids)
    order = np.argsort(name_ids, kind="stable")  # rows grouped by name, in log order within
    grouped = name_ids[order]
    grouped_call = is_call[order]
    same_name = np.concatenate(([False], grouped[1:] == grouped[:-1]))
    after_call = np.concatenate(([False], grouped_call[:-1]))
    # A returned's calling is the row just before it among its name's rows, if that is a calling:
    # an earlier returned of the name popped whatever was open.
    paired = np.flatnonzero(~grouped_call & same_name & after_call)
    start_row = np.full(len(order), -1, np.int64)
    start_row[order[paired]] = order[paired - 1]
    unfinished = _unfinished(order, grouped_call, same_name, after_call)
    done_rows = np.flatnonzero(~is_call)
    failed = np.flatnonzero(np.asarray(calls.failing)[done_rows]).tolist()
    return done_rows, start_row, unfinished, failed


def _gather(column: list[Any] | npt.NDArray[Any], rows: list[int]) -> list[Any]:
    """Return ``column[row]`` for each of ``rows`` as Python objects (one numpy gather for an array)."""
    if isinstance(column, list):
        return [column[row] for row in rows]
    return column[rows].tolist()  # type: ignore[no-any-return]


def _pick(texts: Sequence[str], rows: list[int]) -> list[str]:
    """Return ``texts[row]`` for each of ``rows`` (in one pass where the texts are spans of a block,
    ``TextSpans``, which has a ``pick``)."""
    pick = getattr(texts, "pick", None)
    if pick is not None:
        return pick(rows)  # type: ignore[no-any-return]
    return [texts[row] for row in rows]


def _top(durations_us: Sequence[int], top_n: int, *, plain: bool) -> list[int]:
    """Return the indices of the ``top_n`` longest durations, longest first, ties in log order
    (with numpy unless ``plain``)."""
    if not plain:
        import numpy as np

        try:
            durations = np.array(durations_us, dtype=np.int64)
        except OverflowError:  # a duration beyond int64 (hostile input): Python's ints
            pass
        else:
            # a stable sort of the negated durations: equal ones keep their log order, as nlargest's
            return np.argsort(-durations, kind="stable")[:top_n].tolist()  # type: ignore[no-any-return]
    # nlargest is sorted(..., reverse=True)[:n]: equal durations keep their log order
    return heapq.nlargest(top_n, range(len(durations_us)), key=durations_us.__getitem__)


def _unfinished(
    order: IntArray,
    grouped_call: npt.NDArray[np.bool_],
    same_name: npt.NDArray[np.bool_],
    after_call: npt.NDArray[np.bool_],
) -> list[int]:
    """Return the rows of the callings still open at the end, in the order their names were opened."""
    import numpy as np

    # A name is open at the end if its last row is a calling; its entry holds that (latest) calling
    # but sits in the dict where the first calling of its final run of callings inserted it.
    last_of_name = np.concatenate((~same_name[1:], [True]))
    open_last = np.flatnonzero(last_of_name & grouped_call)
    if not len(open_last):
        return []
    run_first = grouped_call & ~(same_name & after_call)
    run_start = np.maximum.accumulate(np.where(run_first, np.arange(len(order)), 0))
    inserted = order[run_start[open_last]]
    return order[open_last][np.argsort(inserted, kind="stable")].tolist()  # type: ignore[no-any-return]

"""Initcall pairing, on the block scan's arrays and on the line path's lists, against an independent
walk with a dict of open calls."""

from __future__ import annotations

import heapq

import pytest
from columns_arrays import initcalls_as_arrays
from hypothesis import given, settings
from hypothesis import strategies as st

from bootscope.analyze.initcalls import summarize_initcalls
from bootscope.model import Initcall, InitcallSummary
from bootscope.parse.columns import InitcallColumns, InitcallRow, initcall_columns

_NAN = float("nan")


def _walk(rows: list[InitcallRow], times: list[float | None], top_n: int) -> InitcallSummary:
    """The reference: one pass in log order, a dict of open calls by name."""
    opened: dict[str, tuple[float | None, int | None, str | None]] = {}
    done: list[Initcall] = []
    for (call, name, module, pid, ret, usecs), t in zip(rows, times, strict=True):
        if call:
            opened[name] = (t, int(pid) if pid else None, module or None)
            continue
        start_s, start_pid, start_module = opened.pop(name, (None, None, None))
        duration = int(usecs)
        if start_s is None and t is not None:
            start_s = max(t - duration / 1e6, 0.0)
        done.append(Initcall(name, start_s, duration, int(ret), start_pid, start_module or module or None))
    unfinished = tuple(
        Initcall(name, t, None, None, pid, module) for name, (t, pid, module) in opened.items()
    )
    return InitcallSummary(
        count=len(done) + len(unfinished),
        total_s=sum(c.duration_us or 0 for c in done) / 1e6,
        failed=tuple(c for c in done if c.ret),
        unfinished=unfinished,
        top=tuple(heapq.nlargest(top_n, done, key=lambda c: c.duration_us or 0)),
        all=(*done, *unfinished),
    )


_ROW = st.tuples(
    st.booleans(),
    st.sampled_from(["a", "b", "c", "d"]),
    st.sampled_from(["", "mod"]),
    st.sampled_from(["1", "2", ""]),
    st.sampled_from(["0", "0", "-19", "00", "-0", "5"]),
    st.sampled_from(["0", "7", "7", "100", "123456789012345678901234"]),
    st.one_of(st.none(), st.floats(0, 10, allow_nan=False)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_ROW, max_size=40), st.integers(1, 5))
def test_pairing_on_arrays_matches_the_dict_walk(
    items: list[tuple[bool, str, str, str, str, str, float | None]], top_n: int
) -> None:
    rows: list[InitcallRow] = []
    times: list[float | None] = []
    for is_call, name, module, pid, ret, usecs, t in items:
        rows.append(
            ("c", name, module, pid or "1", "", "") if is_call else ("", name, module, "", ret, usecs)
        )
        times.append(t)
    plain = initcall_columns(rows, [_NAN if t is None else t for t in times])
    assert isinstance(plain.is_call, list)
    for columns in (plain, initcalls_as_arrays(plain)):
        assert summarize_initcalls(columns, top_n) == _walk(rows, times, top_n)
        lean = summarize_initcalls(columns, top_n, keep_all=False)
        assert lean.all == () and lean.top == _walk(rows, times, top_n).top


@pytest.mark.parametrize("arrays", [False, True])
def test_a_slice_of_a_block_pairs_within_itself(arrays: bool) -> None:
    rows: list[InitcallRow] = [
        ("c", "x", "", "1", "", ""),
        ("", "x", "", "", "0", "5"),
        ("c", "y", "", "1", "", ""),
        ("", "y", "", "", "-5", "9"),
        ("c", "z", "", "2", "", ""),
    ]
    columns: InitcallColumns = initcall_columns(rows, [1.0, 1.5, 2.0, 2.5, 3.0])
    if arrays:
        columns = initcalls_as_arrays(columns)
    second = summarize_initcalls(columns.slice(2, 5), 5)
    assert second == _walk(rows[2:], [2.0, 2.5, 3.0], 5)
    assert [c.name for c in second.failed] == ["y"] and [c.name for c in second.unfinished] == ["z"]

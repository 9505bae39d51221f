"""Columns of the line path (Python lists) turned into the block scan's numpy arrays, so that one
test can run the analysis' numpy code and its plain twin on the same data."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from bootscope.parse.columns import BootColumns, InitcallColumns


def initcalls_as_arrays(calls: InitcallColumns) -> InitcallColumns:
    """Return ``calls`` with its numeric columns as numpy arrays (the block scan's form)."""
    return replace(
        calls,
        is_call=np.array(calls.is_call, dtype=bool),
        name_ids=np.array(calls.name_ids, dtype=np.int64),
        times_s=np.array(calls.times_s, dtype=np.float64),
        failing=np.array(calls.failing, dtype=bool),
        done_before=np.array(calls.done_before, dtype=np.int64),
    )


def as_arrays(cols: BootColumns) -> BootColumns:
    """Return ``cols`` with every numeric column as a numpy array (the block scan's form)."""
    assert isinstance(cols.timed_s, list), "already arrays"
    return replace(
        cols,
        timed_index=np.array(cols.timed_index, dtype=np.int64),
        timed_s=np.array(cols.timed_s, dtype=np.float64),
        initcalls=initcalls_as_arrays(cols.initcalls),
    )

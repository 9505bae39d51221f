"""Initcalls from ``initcall_debug`` (init/main.c): pair each ``calling`` with its ``returned``."""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from operator import itemgetter

from bootscope.model import Initcall, InitcallSummary
from bootscope.parse.columns import InitcallRow

# (name, start_s, duration_us, ret, pid, module): an Initcall's fields, built into one only if needed
_Done = tuple[str, float | None, int, int, int | None, str | None]
_DURATION = itemgetter(2)


class InitcallSeen:
    """Collects initcall lines of one boot, in order; ``summary`` turns them into an InitcallSummary."""

    def __init__(self) -> None:
        self._open: dict[str, tuple[float | None, int | None, str | None]] = {}
        self._done: list[_Done] = []

    def feed(self, rows: Iterable[InitcallRow], times_s: Iterable[float | None]) -> None:
        """Note initcall lines (a ``calling`` or a ``returned`` each) at their guest times (s).

        A ``returned`` without its ``calling`` starts ``duration`` before its own line (not before 0).
        """
        opened = self._open
        done = self._done.append
        for (name, module, pid, done_name, done_module, ret, usecs), t in zip(rows, times_s, strict=True):
            if name:
                opened[name] = (t, int(pid) if pid else None, module or None)
                continue
            start_s, start_pid, started_module = opened.pop(done_name, (None, None, None))
            duration_us = int(usecs or 0)
            if start_s is None and t is not None:
                start_s = max(t - duration_us / 1e6, 0.0)
            done(
                (
                    done_name,
                    start_s,
                    duration_us,
                    int(ret or 0),
                    start_pid,
                    started_module or done_module or None,
                )
            )

    def summary(self, top_n: int, *, keep_all: bool = True) -> InitcallSummary:
        """Return counts, total (s), failures (non-zero returns), calls that never returned and the top N.

        ``keep_all`` False leaves ``all`` empty (a caller that only needs the top N saves building
        one Initcall per call).
        """
        unfinished = tuple(
            Initcall(name, start_s, None, None, pid, module)
            for name, (start_s, pid, module) in self._open.items()
        )
        done = self._done
        # nlargest is sorted(..., reverse=True)[:n]: equal durations keep their log order
        top = heapq.nlargest(top_n, done, key=_DURATION)
        return InitcallSummary(
            count=len(done) + len(unfinished),
            total_s=sum(map(_DURATION, done)) / 1e6,
            failed=tuple(Initcall(*call) for call in done if call[3]),
            unfinished=unfinished,
            top=tuple(Initcall(*call) for call in top),
            all=(*(Initcall(*call) for call in done), *unfinished) if keep_all else (),
        )

"""Answers a server keeps: the costly ones (a diff reads and analyses every boot's log; a fleet query
scans every fleet boot), each under a key that holds the state of what it was computed from, so a
change in the store makes a new key and a new answer, never a stale one."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class Kept(Generic[T]):
    """At most ``size`` answers, the least recently used dropped first; safe across threads."""

    def __init__(self, size: int) -> None:
        """Keep at most ``size`` answers."""
        self._size = size
        self._kept: OrderedDict[Hashable, T] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        """Return the answer kept under ``key``, or ``make()``'s, kept (two threads asking at once
        may both make it: the answer is the same). Raises what ``make`` raises, keeping nothing."""
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        answer = make()
        with self._lock:
            self._kept[key] = answer
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return answer

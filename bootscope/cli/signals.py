"""Ctrl-C and `kill` for commands that boot: stop cleanly, keep what was measured."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def stop_on_signals(cancel: threading.Event) -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM set ``cancel`` and raise KeyboardInterrupt.

    `kill PID` then ends a run like Ctrl-C: the boots done stay stored and the run is marked
    interrupted. The event reaches the boot loop even when the KeyboardInterrupt itself is lost
    (Python ignores exceptions raised in its fork handlers, and QEMU is started by fork). The
    previous handlers are restored on exit.
    """

    def handler(_signum: int, _frame: object) -> None:
        cancel.set()
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)

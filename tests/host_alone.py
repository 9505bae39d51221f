"""A pytest plugin: tests marked ``alone`` have the host to themselves under pytest-xdist.

Their boots measure host time (plain TCG, two vCPUs, a hog of their own, cyclictest), so another
worker's boot on the same cores would stretch what they measure. Every other test holds a shared lock
while it runs (setup, call and teardown, so a module fixture's boots are inside); an ``alone`` test
takes the lock exclusively and so waits for the other worker's current test to end, and the other
worker waits for it. A turnstile lock in front makes a waiting ``alone`` test stop new shared holders,
so it cannot starve. Without xdist (one process) nothing is locked.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


def _lock_paths(config: pytest.Config) -> tuple[Path, Path] | None:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        return None
    stem = Path(tempfile.gettempdir()) / f"bootscope-tests-{workerinput['testrunuid']}"
    return stem.with_suffix(".turnstile"), stem.with_suffix(".host")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    paths = _lock_paths(item.config)
    if paths is None:
        yield
        return
    turnstile_path, host_path = paths
    alone = item.get_closest_marker("alone") is not None
    turnstile = os.open(turnstile_path, os.O_CREAT | os.O_RDWR, 0o600)
    host = os.open(host_path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        if alone:
            fcntl.flock(host, fcntl.LOCK_EX)
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        else:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
            fcntl.flock(host, fcntl.LOCK_SH)
        yield
    finally:
        os.close(host)  # closing the descriptor releases its locks
        os.close(turnstile)

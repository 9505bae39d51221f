"""A real `bootscope serve` process on a free loopback port, for the serve and browser tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
START_LIMIT_S = 30


@contextmanager
def serving(db: str, *extra: str) -> Iterator[str]:
    """Run `bootscope serve --db DB --port 0 EXTRA...` and yield its URL (the first line it prints);
    the process is stopped with SIGTERM afterwards, and must have printed no traceback."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "bootscope", "serve", "--db", db, "--port", "0", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("serving "):
            proc.kill()
            raise AssertionError(f"serve did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
        yield line.split()[1].rstrip("/")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=START_LIMIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        assert "Traceback" not in (err or ""), err


def read_while_writing(
    url: str, paths: Sequence[str], readers: int, write: Callable[[], None]
) -> tuple[list[str], list[int]]:
    """Ask ``paths`` of the server at ``url`` from ``readers`` threads, over and over, while
    ``write()`` runs; return every answer that was not a 200 (path, status, text) and, for each
    ``/api/runs`` answered, how many runs it listed."""
    errors: list[str] = []
    listed: list[int] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            for path in paths:
                answer = httpx.get(url + path, timeout=60)
                if answer.status_code != 200:
                    errors.append(f"{path}: {answer.status_code} {answer.text[:200]}")
                elif path == "/api/runs":
                    listed.append(len(answer.json()))

    threads = [threading.Thread(target=read) for _ in range(readers)]
    for thread in threads:
        thread.start()
    try:
        write()
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    return errors, listed

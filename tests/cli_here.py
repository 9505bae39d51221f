"""Run the CLI's real entry point in this process: the error paths need no boot, and a fresh
interpreter per case costs seconds of imports."""

from __future__ import annotations

import sys

from bootscope.cli import main


def run_in_process(*args: str) -> int:
    """Run ``bootscope ARGS...`` through ``bootscope.cli.main`` and return its exit code; output goes
    where the test's capture (capsys) takes it."""
    saved = sys.argv
    sys.argv = ["bootscope", *args]
    try:
        main()
    except SystemExit as stop:
        return int(stop.code or 0)
    finally:
        sys.argv = saved
    return 0

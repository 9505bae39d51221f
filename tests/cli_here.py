"""Run the CLI's real entry point in this process: the error paths need no boot, and a fresh
interpreter per case costs seconds of imports."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

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


def run_json(
    capsys: pytest.CaptureFixture[str], *args: str, ok_codes: tuple[int, ...] = (0,)
) -> dict[str, Any]:
    """Run ``bootscope ARGS... --format json`` in this process, assert its exit code is one of
    ``ok_codes`` and return the JSON document it printed."""
    capsys.readouterr()
    code = run_in_process(*args, "--format", "json")
    out = capsys.readouterr().out
    assert code in ok_codes, out
    document: dict[str, Any] = json.loads(out)
    return document

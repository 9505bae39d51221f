"""``bootscope --version`` and ``-V`` (issue 26, point 14): the version, exit 0, nothing else."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from cli_here import run_in_process

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _declared_version() -> str:
    """The version pyproject.toml declares (the installed metadata is made from it)."""
    return str(tomllib.loads(PYPROJECT.read_text())["project"]["version"])


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_prints_the_version_and_exits_0(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_in_process(flag) == 0
    captured = capsys.readouterr()
    assert captured.out == f"bootscope {_declared_version()}\n"
    assert captured.err == ""


def test_version_as_the_user_runs_it() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bootscope", "--version"], capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, f"bootscope {_declared_version()}\n", "")


def test_help_lists_the_version_option(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert run_in_process("--help") == 0
    assert "-V, --version" in capsys.readouterr().out

"""Outputs are written whole or not at all: an interrupted writer leaves the old file and no debris."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from bootscope.errors import InputError
from bootscope.report.atomic import write_atomically, write_text_atomically


def test_interrupt_mid_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_text("old, complete report")

    def half_then_ctrl_c(temporary: Path) -> None:
        temporary.write_text("<html><body>half a rep")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_atomically(target, half_then_ctrl_c)
    assert target.read_text() == "old, complete report"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_success_replaces_with_the_whole_file_and_the_usual_mode(tmp_path: Path) -> None:
    target = tmp_path / "trace.json"
    target.write_text("old")
    write_text_atomically(target, "{}\n" * 1000)
    assert target.read_text() == "{}\n" * 1000
    mask = os.umask(0o022)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask  # not mkstemp's 0600
    assert [p.name for p in tmp_path.iterdir()] == ["trace.json"]


def test_the_writer_sees_the_target_suffix(tmp_path: Path) -> None:
    seen: list[str] = []
    write_atomically(tmp_path / "gaps.svg", lambda temporary: seen.append(temporary.suffix) or None)
    assert seen == [".svg"]


def test_unwritable_directory_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot write"):
        write_text_atomically(tmp_path / "missing-dir" / "report.html", "x")

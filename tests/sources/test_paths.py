"""Which files a list of log paths names (``--a-logs``/``--b-logs`` of compare and diff, check's logs):
files, directories, ``-`` and globs, one reading for every command (issue 26, point 14)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bootscope.errors import InputError
from bootscope.sources.paths import log_files, side_label


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """before/{b.log, a.log, .hidden, notes.txt, sub/deep.log} and one.log beside it."""
    before = tmp_path / "before"
    (before / "sub").mkdir(parents=True)
    for name in ("b.log", "a.log", ".hidden", "notes.txt", "sub/deep.log"):
        (before / name).write_text("x\n")
    (tmp_path / "one.log").write_text("x\n")
    return tmp_path


def test_files_directories_and_stdin_in_the_order_given(tree: Path) -> None:
    before = tree / "before"
    got = log_files([tree / "one.log", before, Path("-")])
    # a directory: its files in name order, no dot file, no sub-directory
    assert got == [tree / "one.log", before / "a.log", before / "b.log", before / "notes.txt", Path("-")]


def test_a_quoted_glob_is_expanded_sorted_without_dot_files(tree: Path) -> None:
    before = tree / "before"
    assert log_files([before / "*.log"]) == [before / "a.log", before / "b.log"]
    assert log_files([before / "?.log", tree / "one.log"]) == [
        before / "a.log",
        before / "b.log",
        tree / "one.log",
    ]
    assert log_files([before / "**" / "*.log"]) == [
        before / "a.log",
        before / "b.log",
        before / "sub/deep.log",
    ]


def test_a_path_that_names_nothing_is_one_clear_error(tree: Path) -> None:
    with pytest.raises(InputError, match="no such file or directory"):
        log_files([tree / "missing"])
    with pytest.raises(InputError, match=r"\*\.dmesg: the pattern matches no file"):
        log_files([tree / "before" / "*.dmesg"])


def test_an_existing_file_named_like_a_pattern_is_that_file(tree: Path) -> None:
    odd = tree / "boot[1].log"
    odd.write_text("x\n")
    assert log_files([odd]) == [odd]


def test_side_label_names_the_directory_not_the_pattern() -> None:
    assert side_label([Path("logs/before/")], "a") == "before"
    assert side_label([Path("logs/before/*.log")], "a") == "before"
    assert side_label([Path("smp1.log"), Path("x")], "a") == "smp1.log"
    assert side_label([Path("-")], "b") == "b"
    assert side_label([Path("*.log")], "a") == "a"

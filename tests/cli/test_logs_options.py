"""``--a-logs``/``--b-logs`` mean the same in ``compare`` and ``diff`` (issue 26, point 14): log files,
directories and quoted globs, repeatable. Before, ``compare`` took one directory only.

The expected values are read off the logs by the small reader below (the printk stamp of the ``Run
/init`` line), not by bootscope."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from cli_here import run_in_process

from bootscope.usecases.diff import parts_from_logs

SMP1 = "debian-6.1-cloud-initcall-smp1.log"
SMP2 = "debian-6.1-cloud-smp2.log"
SMP2_GRAB = "debian-6.1-cloud-smp2-grabserial.log"
SMP4 = "debian-6.1-cloud-initcall-smp4.log"
RUN_INIT = re.compile(r"\[\s*(\d+\.\d+)\] (?:guest kernel: )?Run /init as init process")


def run_init_s(path: Path) -> float:
    """The printk time of the one ``Run /init`` line of a one-boot log (grabserial's host stamp first)."""
    (stamp,) = RUN_INIT.findall(path.read_text(errors="replace"))
    return float(stamp)


@pytest.fixture
def sides(tmp_path: Path, data_dir: Path) -> Path:
    """before/{smp2, smp2-grabserial}.log and after/{smp1, smp4}.log copied from tests/data."""
    for side, names in (("before", (SMP2, SMP2_GRAB)), ("after", (SMP1, SMP4))):
        (tmp_path / side).mkdir()
        for name in names:
            shutil.copy(data_dir / name, tmp_path / side / name)
    return tmp_path


def test_compare_takes_files_repeated_and_a_quoted_glob(
    sides: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before, after = sides / "before", sides / "after"
    code = run_in_process(
        "compare", "--a-logs", str(before / SMP2), "--a-logs", str(before / SMP2_GRAB),
        "--b-logs", str(after / "*.log"), "--format", "json",
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    doc = json.loads(out)
    assert doc["a"]["values"] == [run_init_s(before / SMP2), run_init_s(before / SMP2_GRAB)]
    # the glob, sorted: initcall-smp1 before initcall-smp4; the side is named after its directory
    assert doc["b"]["values"] == [run_init_s(after / SMP1), run_init_s(after / SMP4)]
    assert (doc["a"]["name"], doc["b"]["name"]) == (SMP2, "after")


def test_compare_directories_and_files_give_the_same_numbers(
    sides: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    by_dir = run_in_process("compare", "--a-logs", str(sides / "before"), "--b-logs", str(sides / "after"),
                            "--format", "json")  # fmt: skip
    dir_doc = json.loads(capsys.readouterr().out)
    files = [f"--b-logs={sides / 'after' / name}" for name in (SMP1, SMP4)]
    by_file = run_in_process("compare", "--a-logs", str(sides / "before" / "*"), *files, "--format", "json")
    file_doc = json.loads(capsys.readouterr().out)
    assert by_dir == by_file == 0
    assert dir_doc["a"]["values"] == file_doc["a"]["values"]
    assert dir_doc["b"]["values"] == file_doc["b"]["values"]


def test_a_glob_that_matches_nothing_is_one_line_exit_2(
    sides: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in ("compare", "diff"):
        code = run_in_process(
            command, "--a-logs", str(sides / "before" / "*.gz"), "--b-logs", str(sides / "after")
        )
        err = capsys.readouterr().err
        assert code == 2, (command, err)
        assert err == f"bootscope: error: {sides / 'before' / '*.gz'}: the pattern matches no file\n"


def test_diff_reads_a_glob_as_compare_does(sides: Path) -> None:
    boots, warnings = parts_from_logs([sides / "after" / "*smp?.log"], "kernel_init_s")
    assert warnings == []
    assert [boot.label for boot in boots] == [SMP1, SMP4]
    assert [boot.total_s for boot in boots] == [run_init_s(sides / "after" / n) for n in (SMP1, SMP4)]

"""``bootscope latency analyze`` end to end, in a subprocess as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent.parent / "data" / "latency"


def _bootscope(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "bootscope", "latency", *args], input=stdin, capture_output=True, check=False
    )


def test_table_marks_overflow_and_unresolved_quantiles() -> None:
    result = _bootscope("analyze", str(DATA / "cyclictest-h200-q.txt"))
    assert result.returncode == 0, result.stderr
    # rows are grouped under their file's line; a quantile in the overflow of the 200 us histogram
    # reads ">200"
    t0 = next(line for line in result.stdout.decode().splitlines() if line.startswith("T0 "))
    assert ">200" in t0.split() and "1068" in t0.split()
    t1 = next(line for line in result.stdout.decode().splitlines() if line.startswith("T1 "))
    assert "n/a" in t1  # 9986 cycles x 0.001 < 10


def test_json_from_stdin() -> None:
    result = _bootscope("analyze", "-", "--format", "json", stdin=(DATA / "oslat-D2.txt").read_bytes())
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)["rows"]
    assert [row["cycles"] for row in rows] == [39334356, 47534409]


def test_binary_junk_is_one_line_and_exit_2() -> None:
    result = _bootscope("analyze", "-", stdin=bytes(range(256)) * 8)
    assert result.returncode == 2
    assert len(result.stderr.decode().strip().splitlines()) == 1

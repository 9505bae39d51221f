"""A paste holding two cyclictest runs (a README quoting two invocations) gives both runs' threads,
named apart, and says so; one run, live or quiet, stays one run.

The README is composed here from two real outputs of tests/data/latency (provenance in
tests/data/README.md): ``cyclictest-q.txt`` and ``cyclictest-json-run.txt``. The expected numbers are
read off those files by hand.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bootscope.parse.latency import parse_latency_text

DATA = Path(__file__).parent.parent / "data" / "latency"


def _readme() -> str:
    first = (DATA / "cyclictest-q.txt").read_text()
    second = (DATA / "cyclictest-json-run.txt").read_text()
    return (
        "# Latency on the test VM\n\nIdle:\n\n```\n$ sudo cyclictest -m -S -p 95 -i 200 -D 2 -q\n"
        f"{first}```\n\nAgain, writing the JSON file too:\n\n"
        "```\n$ sudo cyclictest -m -S -p 95 -i 200 -D 2 -q --json=cyclictest-D2.json\n"
        f"{second}```\n"
    )


def test_two_runs_are_both_shown_and_named_apart() -> None:
    run = parse_latency_text(_readme(), "README.md")
    # cyclictest-q.txt: T0 C 9990 Max 811, T1 C 2841 Max 2537;
    # cyclictest-json-run.txt: T0 C 9920 Max 8809, T1 C 2829 Max 8358
    assert [(s.name, s.cycles, s.max_us) for s in run.series] == [
        ("run1/T0", 9990, 811.0),
        ("run1/T1", 2841, 2537.0),
        ("run2/T0", 9920, 8809.0),
        ("run2/T1", 2829, 8358.0),
    ]
    assert run.warnings[0].startswith("README.md holds 2 cyclictest runs")


def test_one_run_stays_one_run_quiet_live_and_with_its_invocation() -> None:
    for name in ("cyclictest-q.txt", "cyclictest-live-escapes.txt", "cyclictest-h200-q.txt"):
        text = "$ cyclictest -m -S -p 95 -i 200 -D 2 -q\n" + (DATA / name).read_text()
        run = parse_latency_text(text, name)
        assert [s.name for s in run.series] == ["T0", "T1"], name
        assert not any("runs" in warning for warning in run.warnings), name


def test_latency_analyze_says_there_were_two_runs(tmp_path: Path) -> None:
    path = tmp_path / "README.md"
    path.write_text(_readme())
    done = subprocess.run(
        [sys.executable, "-m", "bootscope", "latency", "analyze", str(path), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert "holds 2 cyclictest runs" in document["warnings"][0]
    assert len(document["rows"]) == 4

"""The like-for-like guard (issue 26 point 4): facts that differ between two groups of boots, read
from real logs and from the demo store; initcalls seen on one side only because of initcall_debug
are not called regressions. Expected values come from the logs' own lines and the store's rows,
read here with grep-like code and sqlite3."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from cli_here import run_in_process

from bootscope.analyze.like_for_like import (
    BootFacts,
    instrumentation,
    like_for_like,
    not_like_for_like,
    printing_differs,
)

DATA = Path(__file__).parent.parent / "data"
PLAIN = [DATA / "debian-6.1-cloud-smp2.log", DATA / "debian-6.1-cloud-smp2-kmsg.log"]
DEBUG = [DATA / "debian-6.1-cloud-initcall-smp1.log", DATA / "debian-6.1-cloud-initcall-smp4.log"]
DEMO = DATA / "golden" / "demo-6.1-cloud.db"


def _cmdline(path: Path) -> str:
    match = re.search(r"Kernel command line: (.*)", path.read_text(errors="replace"))
    assert match is not None
    return match.group(1).strip()


def test_instrumentation_knobs_of_a_command_line() -> None:
    knobs = instrumentation("console=ttyS0 panic=-1 initcall_debug loglevel=7")
    assert knobs["initcall_debug"] == "on" and knobs["loglevel"] == "7"
    assert knobs["ignore_loglevel"] == "off" and knobs["console"] == "ttyS0"
    assert instrumentation("quiet 'unbalanced")["quiet"] == "on"


def test_facts_that_differ_are_named_with_both_values() -> None:
    a = [BootFacts("6.1.0-56-cloud-amd64", "console=ttyS0", 1, 512.0, "x86_64", "tcg", "vm")] * 3
    b = [
        BootFacts(
            "6.12.57+deb13-cloud-amd64", "console=ttyS0 initcall_debug", 1, 500.0, "x86_64", "kvm", "vm"
        )
    ]
    result = like_for_like(a, b)
    assert not result.ok
    fields = {d.field: (d.a, d.b) for d in result.differences}
    assert fields == {
        "kernel release": (("6.1.0-56-cloud-amd64",), ("6.12.57+deb13-cloud-amd64",)),
        "initcall_debug": (("off",), ("on",)),
        "accelerator": (("tcg",), ("kvm",)),
    }  # 512 against 500 MiB: within the tolerance of reported memory
    assert printing_differs(result) == ("initcall_debug",)
    line = not_like_for_like(result, "old", "new")
    assert line is not None and line.startswith("NOT LIKE FOR LIKE: ")
    assert "initcall_debug (old: off; new: on)" in line
    assert like_for_like(a, a).ok and not_like_for_like(like_for_like(a, a), "x", "y") is None
    # A fact one side does not state is not compared.
    assert like_for_like(a, [BootFacts()]).ok


def test_diff_of_logs_that_print_differently_calls_no_initcall_a_regression(
    capsys: pytest.CaptureFixture[str],
) -> None:
    plain_words = {w for p in PLAIN for w in _cmdline(p).split()}
    debug_words = {w for p in DEBUG for w in _cmdline(p).split()}
    assert "ignore_loglevel" in debug_words and "ignore_loglevel" not in plain_words
    args = [a for p in PLAIN for a in ("--a-logs", str(p))] + [a for p in DEBUG for a in ("--b-logs", str(p))]
    assert run_in_process("diff", *args, "--format", "json", "--top", "1000") == 0
    doc = json.loads(capsys.readouterr().out)
    guard = doc["like_for_like"]
    assert guard["ok"] is False
    fields = {d["field"]: d for d in guard["differences"]}
    assert fields["ignore_loglevel"]["a"] == ["off"] and fields["ignore_loglevel"]["b"] == ["on"]
    assert fields["ignore_loglevel"]["changes_printing"] is True
    # The per-initcall rows exist on the debug side only: set apart, never "appeared" and moved.
    assert not [c for c in doc["components"] if c["kind"] == "initcall" and c["status"] == "appeared"]
    printed = doc["printed_one_side"]
    assert len([c for c in printed if c["kind"] == "initcall"]) > 500
    assert all(not c["moved"] for c in printed)
    assert any("on one side only because the sides print differently" in line for line in doc["summary"])
    assert any(line.startswith("NOT LIKE FOR LIKE: ") for line in doc["summary"])
    # Two boots a side cannot decide (smallest possible p = 2 / C(4, 2)).
    assert doc["total"]["verdict"] == "cannot tell" and "p = 0.33" in doc["total"]["cannot_tell"]


def test_compare_and_diff_of_a_run_mark_variants_that_differ(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "demo.db"
    shutil.copyfile(DEMO, db)
    with sqlite3.connect(db) as connection:
        config = {
            name: json.loads(text)
            for name, text in connection.execute("select name, config from variants where experiment = 1")
        }
    assert config["ic"]["append"] == "initcall_debug" and config["smp1"]["append"] == ""
    assert (config["smp1"]["smp"], config["smp2"]["smp"]) == (1, 2)
    assert run_in_process("compare", "1", "--baseline", "smp1", "--db", str(db), "--format", "json") == 0
    smp2, ic = json.loads(capsys.readouterr().out)
    assert smp2["like_for_like"] == {
        "ok": False,
        "differences": [{"field": "cpus", "a": ["1"], "b": ["2"], "changes_printing": False}],
    }
    assert [d["field"] for d in ic["like_for_like"]["differences"]] == ["initcall_debug"]
    assert run_in_process("compare", "1", "--baseline", "smp1", "--db", str(db)) == 0
    table = " ".join(capsys.readouterr().out.split())
    assert "ic: NOT LIKE FOR LIKE: the sides differ in initcall_debug (smp1: off; ic: on)" in table
    assert run_in_process("diff", "1", "--variant", "ic", "--db", str(db), "--format", "mail") == 0
    mail = " ".join(capsys.readouterr().out.split())
    assert "NOT LIKE FOR LIKE: the sides differ in initcall_debug (smp1: off; ic: on)" in mail

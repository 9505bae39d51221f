"""The CI gate through the CLI's entry point: `baseline save` from logs as well as from a run, what it
says the reference can prove, `check` of the same boots passing, and read-only commands that never
create a store (exit 2, one line, no file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_here import run_in_process
from planted_logs import write_planted

SOURCE = Path(__file__).parent.parent / "data" / "debian-6.1-cloud-initcall-smp4.log"
DEMO = Path(__file__).parent.parent / "data" / "golden" / "demo-6.1-cloud.db"


def test_baseline_save_from_logs_and_check_of_the_same_logs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = write_planted(SOURCE, tmp_path / "logs", 8, seed=3)
    ref = tmp_path / "ref.json"
    assert run_in_process("baseline", "save", str(tmp_path / "logs"), "-o", str(ref)) == 0
    err = capsys.readouterr().err
    assert "passes an unchanged kernel" in err and "catches a slowdown of" in err
    document = json.loads(ref.read_text())
    assert document["source"] == {"logs": [str(tmp_path / "logs")], "boots": 8}
    assert len(document["metrics"]["kernel_init_s"]) == 8
    reach = document["resolution"]["kernel_init_s"]
    assert reach["check_boots"] == 8 and reach["margin_s"] >= reach["threshold_s"] > 0
    assert document["machine"]["from"] == "logs" and document["machine"]["cpus"] == [4]
    assert run_in_process("check", *map(str, logs), "--against", str(ref)) == 0
    assert "pass:" in capsys.readouterr().err


def test_the_demo_variant_checked_against_itself_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "demo.db"
    db.write_bytes(DEMO.read_bytes())
    ref = tmp_path / "ref.json"
    assert run_in_process("baseline", "save", "1:smp1", "--db", str(db), "-o", str(ref)) == 0
    assert run_in_process("check", "1:smp1", "--against", str(ref), "--db", str(db)) == 0
    assert run_in_process("check", "1:smp2", "--against", str(ref), "--db", str(db)) == 1
    capsys.readouterr()
    # The initcall_debug variant: marked, and its initcalls (absent from the reference) not counted.
    assert run_in_process("check", "1:ic", "--against", str(ref), "--db", str(db)) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("NOT LIKE FOR LIKE: the sides differ in initcall_debug")
    assert "components the reference lacks are not counted" in captured.err
    # A run that is not there: bad input (2), as the README says, not a failed store (4).
    assert run_in_process("check", "9:smp1", "--against", str(ref), "--db", str(db)) == 2
    assert run_in_process("baseline", "save", "9", "--db", str(db), "-o", str(tmp_path / "x.json")) == 2
    assert run_in_process("compare", "9", "--db", str(db)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert all(line.endswith("no experiment 9 (see `bootscope runs`)") for line in err), err


@pytest.mark.parametrize(
    "args",
    [
        ("compare", "1"),
        ("diff", "1"),
        ("report", "--run", "1", "-o", "{tmp}/r.html"),
        ("check", "1:smp1", "--against", "{tmp}/ref.json"),
        ("baseline", "save", "1:smp1", "-o", "{tmp}/ref2.json"),
        ("plot", "--run", "1", "-o", "{tmp}/p.svg"),
        ("trace", "--run", "1", "-o", "{tmp}/t.json"),
        ("latency", "show", "2"),
    ],
)
def test_a_db_typo_creates_nothing(
    args: tuple[str, ...], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = {"format": "bootscope-reference", "version": 1, "metrics": {}, "components": {}}
    (tmp_path / "ref.json").write_text(json.dumps(empty))
    typo = tmp_path / "typo.db"
    argv = [arg.replace("{tmp}", str(tmp_path)) for arg in args]
    assert run_in_process(*argv, "--db", str(typo)) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [f"bootscope: error: no store at {typo} (check --db; `bootscope run` creates one)"]
    assert not typo.exists() and not list(tmp_path.glob("typo.db*"))

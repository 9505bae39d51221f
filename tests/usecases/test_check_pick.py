"""`check RUN --against DIR`: the reference whose fingerprint is the run's, or a refusal naming the
field that differs (the demo store's real boots: smp1, smp2 and ic variants of one run)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli_here import run_in_process, run_json

DEMO_DB = Path(__file__).resolve().parents[1] / "data" / "golden" / "demo-6.1-cloud.db"


@pytest.fixture
def references(tmp_path: Path) -> tuple[str, Path]:
    db = tmp_path / "demo.db"
    shutil.copyfile(DEMO_DB, db)
    folder = tmp_path / "refs"
    folder.mkdir()
    for variant in ("smp1", "smp2"):
        assert (
            run_in_process(
                "baseline", "save", f"1:{variant}", "-o", str(folder / f"{variant}.json"), "--db", str(db)
            )
            == 0
        )
    return str(db), folder


def test_the_reference_of_the_runs_own_fingerprint_is_picked(
    references: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    db, folder = references
    checked = run_json(capsys, "check", "1:smp2", "--against", str(folder), "--db", db, ok_codes=(0, 1, 125))
    assert checked["exit_code"] == 0  # its own boots against its own reference pass
    assert any("reference smp2.json" in note for note in checked["notes"]), checked["notes"]


def test_no_reference_of_that_machine_and_command_line_is_refused_naming_the_field(
    references: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    db, folder = references
    capsys.readouterr()
    assert run_in_process("check", "1:ic", "--against", str(folder), "--db", db) == 2
    err = capsys.readouterr().err.strip()
    # ic boots smp 1 with initcall_debug: smp1's reference is the closest, one field apart.
    assert "the closest, smp1.json, differs in option.append '' there, 'initcall_debug' here" in err, err
    assert len(err.splitlines()) == 1
    assert run_in_process("check", str(folder / "smp1.json"), "--against", str(folder), "--db", db) == 2
    assert "picked for a stored run" in capsys.readouterr().err

"""`compare --metric unit:NAME` on a stored run: a unit's activation time per boot, read from each
boot's collector block through the one stored-boot analysis (fake target printing the block)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_here import run_in_process

from bootscope.errors import InputError
from bootscope.lab.plans.boot import Plan, VariantSpec
from bootscope.lab.targets.fake import FakeTarget
from bootscope.store import Store
from bootscope.usecases.run import start_experiment
from bootscope.usecases.samples import values_from_run


def _stored_run(db: Path) -> int:
    plan = Plan(
        variants=(
            VariantSpec("slow", "k", marker="login:", append="fake.unit_ms=slow\\x2dunit.service:3000"),
            VariantSpec("fast", "k", marker="login:", append="fake.unit_ms=slow\\x2dunit.service:1000"),
        ),
        seed=3,
        samples_per_variant=5,
        warmup_per_variant=0,
    )
    with Store.open(db) as store:
        return start_experiment(plan, store, target=FakeTarget(jitter_ms=50)).experiment.id


def test_unit_values_per_variant_come_from_the_stored_consoles(tmp_path: Path) -> None:
    db = tmp_path / "u.db"
    run = _stored_run(db)
    with Store.open(db) as store:
        found = values_from_run(store, str(run), "unit:slow\\x2dunit.service", None)
        assert found.baseline == "slow" and list(found.samples) == ["slow", "fast"]
        assert len(found.samples["slow"]) == len(found.samples["fast"]) == 5
        assert all(3.0 <= v <= 3.05 for v in found.samples["slow"])
        assert all(1.0 <= v <= 1.05 for v in found.samples["fast"])
        with pytest.raises(InputError, match="no ok boot"):
            values_from_run(store, str(run), "unit:absent.service", None)
        with pytest.raises(InputError, match="names no unit"):
            values_from_run(store, str(run), "unit:", None)


def test_compare_calls_the_variant_with_the_quicker_unit_faster(tmp_path: Path) -> None:
    db = tmp_path / "u.db"
    run = _stored_run(db)
    done = subprocess.run(
        [sys.executable, "-m", "bootscope", "compare", str(run), "--metric", "unit:slow\\x2dunit.service",
         "--db", str(db), "--format", "json"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["metric"] == "unit:slow\\x2dunit.service" and doc["verdict"] == "faster"
    assert doc["shift"]["estimate"] == pytest.approx(-2.0, abs=0.06)
    assert "InactiveExitTimestampMonotonic" in doc["definition"]


def test_a_reference_keeps_the_units_and_check_names_a_slower_unit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # baseline save keeps every component, systemd's units too; check --metric userspace_s compares
    # them (check --metric kernel_init_s stops at Run /init and never looks at a unit).
    db = tmp_path / "u.db"
    run = _stored_run(db)
    ref = tmp_path / "fast.json"
    assert run_in_process("baseline", "save", f"{run}:fast", "-o", str(ref), "--db", str(db)) == 0
    units = json.loads(ref.read_text())["components"]["unit"]
    assert len(units["slow\\x2dunit.service"]) == 5
    assert all(1.0 <= v <= 1.05 for v in units["slow\\x2dunit.service"])
    capsys.readouterr()
    slower = run_in_process(
        "check", f"{run}:slow", "--against", str(ref), "--db", str(db), "--metric", "userspace_s"
    )
    err = capsys.readouterr().err
    assert slower == 1, err
    assert "unit slow\\x2dunit.service" in err
    same = run_in_process(
        "check", f"{run}:fast", "--against", str(ref), "--db", str(db), "--metric", "userspace_s"
    )
    err = capsys.readouterr().err
    assert same in (0, 125) and "unit slow" not in err, err
    kernel = run_in_process("check", f"{run}:slow", "--against", str(ref), "--db", str(db))
    assert "unit slow" not in capsys.readouterr().err and kernel in (0, 1, 125)

"""`compare --metric unit:NAME` on a stored run: a unit's activation time per boot, read from each
boot's collector block through the one stored-boot analysis (fake target printing the block)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bootscope.errors import InputError
from bootscope.lab.execute import start_experiment
from bootscope.lab.fake import FakeTarget
from bootscope.lab.plan import Plan, VariantSpec
from bootscope.lab.samples import values_from_run
from bootscope.store import Store


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

"""One stored-boot analysis: the metrics a run stores, `analyze --run`, and what `report`, `trace` and
`plot --run` draw agree for every boot, with a marker variant and on a kexec chain (fake target)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bootscope.analyze.stored import analyze_stored_boot
from bootscope.lab.plans.boot import Plan, VariantSpec
from bootscope.lab.plans.kexec import KexecPlan, KexecVariant
from bootscope.lab.targets.fake import FakeTarget
from bootscope.metrics import HOST_WALL_S, INITRD_S, KERNEL_INIT_S, SYSTEMD_USERSPACE_S, USERSPACE_S
from bootscope.store import BootRecord, Store, VariantRecord
from bootscope.usecases.run import start_experiment, start_kexec
from bootscope.usecases.views import run_view, stored_boot

COMPARED = (KERNEL_INIT_S, USERSPACE_S, HOST_WALL_S)


def _analyze_json(db: Path, run: int, boot: int) -> dict[str, float | None]:
    done = subprocess.run(
        [sys.executable, "-m", "bootscope", "analyze", "--run", str(run), "--boot", str(boot),
         "--db", str(db), "--format", "json"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout)["boots"][0]["metrics"])


def test_a_stored_run_with_a_marker_variant_gives_the_same_numbers_everywhere(tmp_path: Path) -> None:
    plan = Plan(
        variants=(
            VariantSpec("own", "k"),
            VariantSpec("login", "k", marker="login:", append="fake.init_ms=900"),
        ),
        seed=2,
        samples_per_variant=2,
        warmup_per_variant=0,
    )
    db = tmp_path / "s.db"
    with Store.open(db) as store:
        run = start_experiment(plan, store, target=FakeTarget()).experiment.id
        records = store.boots(run)
        views = {r.index: stored_boot(store, run, r.index, records) for r in records}
        analysed = {r.index: analyze_stored_boot(store, run, r.index) for r in records}
    marker_times = set()
    for record in records:
        breakdown = analysed[record.index].analysis.breakdown
        for name in COMPARED:
            stored = record.metrics.get(name)
            assert stored is not None, (record.variant, name)
            assert getattr(breakdown.metrics, name) == pytest.approx(stored, abs=1e-9)
            assert getattr(views[record.index].breakdown.metrics, name) == pytest.approx(stored, abs=1e-9)
        marker_times.add(
            (record.variant, round(record.metrics[USERSPACE_S] - record.metrics[KERNEL_INIT_S], 3))
        )
    # The marker variant ends at its own line ("login:"), later than bootscope's marker.
    own = {gap for variant, gap in marker_times if variant == "own"}
    login = {gap for variant, gap in marker_times if variant == "login"}
    assert own == {0.05} and login == {0.3}
    first = next(r for r in records if r.variant == "login")
    cli = _analyze_json(db, run, first.index)
    assert cli[USERSPACE_S] == pytest.approx(first.metrics[USERSPACE_S], abs=1e-6)
    assert cli[KERNEL_INIT_S] == pytest.approx(first.metrics[KERNEL_INIT_S], abs=1e-6)


def test_a_stored_kexec_chain_gives_the_same_kernel_numbers_everywhere(tmp_path: Path) -> None:
    plan = KexecPlan(
        "from", (KexecVariant("a", "to", append="fake.init_ms=700"),), hops=2, seed=1, accel="tcg"
    )
    db = tmp_path / "k.db"
    with Store.open(db) as store:
        run = start_kexec(plan, store, target=FakeTarget()).experiment.id
        records = store.boots(run)
        analysed = {r.index: analyze_stored_boot(store, run, r.index) for r in records}
    assert len(records) == 3
    for record in records:
        metrics = analysed[record.index].analysis.breakdown.metrics
        assert metrics.kernel_init_s == pytest.approx(record.metrics[KERNEL_INIT_S], abs=1e-9)
    assert _analyze_json(db, run, 3)[KERNEL_INIT_S] == pytest.approx(
        records[2].metrics[KERNEL_INIT_S], abs=1e-6
    )


def test_the_run_report_shows_an_image_runs_userspace_metrics(tmp_path: Path) -> None:
    """`report --run` on a run of system images draws the metrics its summary shows (initrd_s, ...)."""
    with Store.open(tmp_path / "i.db") as store:
        exp = store.create_experiment(
            plan={"workload": "boot", "variants": [{"name": n, "image": "img"} for n in ("a", "b")]},
            seed=1, accel="tcg", accel_reason="test", host={},
            variants=[VariantRecord("a", {"image": "img"}), VariantRecord("b", {"image": "img"})],
        )  # fmt: skip
        for index, (variant, initrd_s) in enumerate((("a", 5.1), ("b", 5.3), ("a", 5.2), ("b", 5.4)), 1):
            metrics = {KERNEL_INIT_S: 4.0, INITRD_S: initrd_s, SYSTEMD_USERSPACE_S: 20.0}
            store.record_boot(exp.id, BootRecord(variant, index, False, "ok", metrics=metrics), [])
        view = run_view(store, str(exp.id), 0.05)
    assert view.metrics == (KERNEL_INIT_S, INITRD_S, SYSTEMD_USERSPACE_S)
    assert {s.name: s.n for s in view.summaries[INITRD_S]} == {"a": 2, "b": 2}

"""The fleet tables on SQLite and on a real PostgreSQL server: import of real logs (tests/data),
re-import stores nothing, the Parquet copy follows the store, KCIDB export and its structure, and
the upgrade of a schema 2 database."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa

from bootscope.store import Store
from bootscope.store.fleet import fleet_state
from bootscope.store.kcidb_export import export_kcidb, structure_errors
from bootscope.store.parquet import refresh_parquet
from bootscope.usecases.fleet.importer import import_fleet
from bootscope.usecases.fleet.logfile import read_fleet_file
from bootscope.usecases.fleet.query import FleetView, summary

DATA = Path(__file__).resolve().parents[1] / "data"
LOGS = (
    "debian-6.1-cloud-smp2.log",
    "multiboot-6.1-cloud-smp2-then-smp1.log",
    "hw/arm64-xgene-mustang-4.19-dmesg.log",
)


def test_fleet_import_on_each_backend(store_target: str, tmp_path: Path) -> None:
    fleet = tmp_path / "logs"
    fleet.mkdir()
    for name in LOGS:
        shutil.copy(DATA / name, fleet / Path(name).name)
    (tmp_path / "hosts.csv").write_text(
        "file,host,model\n"
        "debian-6.1-cloud-smp2.log,q1,qemu\n"
        "multiboot-6.1-cloud-smp2-then-smp1.log,q2,qemu\n"
        "arm64-xgene-mustang-4.19-dmesg.log,x1,xgene\n"
        "gone.log,x2,xgene\n"
    )
    with Store.open(store_target) as store:
        report = import_fleet(store, [str(fleet)], tmp_path / "hosts.csv", workers=1)
        assert (report.imported, report.boots) == (3, 4)
        assert [Path(path).name for path, _ in report.bad] == ["gone.log"]
        again = import_fleet(store, [str(fleet)], tmp_path / "hosts.csv", workers=1)
        assert (again.imported, again.boots, again.already_stored) == (0, 0, 3)
        assert fleet_state(store)[1] == 4

        parquet = tmp_path / "pq"
        snapshot = refresh_parquet(store, parquet)
        assert snapshot.boots == 4 and len(snapshot.parts) == 1
        result = summary(FleetView(snapshot), "kernel_init_s", ["model"])
        expected = sorted(
            boot.metrics["kernel_init_s"]
            for name in LOGS[:2]
            for boot in read_fleet_file(str(DATA / name)).boots
        )
        qemu = next(g for g in result.groups if g.key == ("qemu",))
        assert qemu.n == 3 and qemu.quantiles[0].value == pytest.approx(expected[1])

        # a later import adds one part; nothing already exported is written again
        extra = tmp_path / "extra.log"
        shutil.copy(DATA / "debian-6.1-cloud-initcall-smp4.log", extra)
        import_fleet(store, [str(extra)], workers=1)
        later = refresh_parquet(store, parquet)
        assert later.boots == 5 and later.parts[0] == snapshot.parts[0] and len(later.parts) == 2

        document = export_kcidb(store, "bootscope_test")
    assert structure_errors(document) == []
    boots = [t for t in document["tests"] if t["path"] == "boot"]
    numbers = [t for t in document["tests"] if t["path"].startswith("boot.")]
    assert len(boots) == 5 and all(t["status"] == "PASS" for t in boots)
    init = [t["number"] for t in numbers if t["path"] == "boot.kernel_init_s"]
    assert len(init) == 5 and all(n["unit"] == "s" and n["value"] > 0 for n in init)
    json.dumps(document, allow_nan=False)  # KCIDB JSON: plain numbers only


def test_structure_check_catches_what_kcidb_rejects() -> None:
    good = {
        "version": {"major": 5, "minor": 0},
        "checkouts": [{"id": "o:c", "origin": "o"}],
        "builds": [{"id": "o:b", "origin": "o", "checkout_id": "o:c"}],
        "tests": [{"id": "o:t", "origin": "o", "build_id": "o:b", "path": "boot", "number": {"value": 1.0}}],
    }
    assert structure_errors(good) == []
    bad = json.loads(json.dumps(good))
    bad["version"]["major"] = 4
    bad["tests"][0].update(path="boot time", status="OK", origin="Bad-Origin", build_id="o:none")
    del bad["builds"][0]["checkout_id"]
    bad["checkouts"][0]["comment"] = None
    errors = " | ".join(structure_errors(bad))
    for part in (
        "version.major",
        "lacks required 'checkout_id'",
        "path",
        "status",
        "origin",
        "names no build",
        "null",
    ):
        assert part in errors


def test_schema_2_database_gets_the_fleet_tables(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with Store.open(db) as store:
        store.create_experiment(plan={}, seed=1, accel="tcg", accel_reason="", host={}, variants=[])
    with sqlite3.connect(db) as conn:  # what bootscope wrote before fleets: schema 2, no fleet tables
        conn.execute("DROP TABLE fleet_boots")
        conn.execute("DROP TABLE fleet_files")
        conn.execute("ALTER TABLE boots DROP COLUMN placement")  # schema 3's too
        conn.execute("ALTER TABLE experiments DROP COLUMN meta")  # and schema 4's
        for table in ("watch_events", "watch_items", "watch_alerts", "watch_series"):
            conn.execute(f"DROP TABLE {table}")
        conn.execute("UPDATE bootscope_meta SET value = '2' WHERE key = 'schema'")
    with Store.open(db) as store:
        assert store.experiment(1).seed == 1
        report = import_fleet(store, [str(DATA / "debian-6.1-cloud-smp2.log")], workers=1)
        assert report.boots == 1
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT value FROM bootscope_meta")).scalar() == "5"
        assert conn.execute(sa.text("SELECT count(*) FROM watch_series")).scalar() == 0
    engine.dispose()


def test_parquet_copy_is_rebuilt_for_another_store_and_keeps_other_files(tmp_path: Path) -> None:
    parquet = tmp_path / "pq"
    parquet.mkdir()
    (parquet / "keep.txt").write_text("not bootscope's")
    with Store.open(tmp_path / "a.db") as store:
        import_fleet(store, [str(DATA / "debian-6.1-cloud-smp2.log")], workers=1)
        assert refresh_parquet(store, parquet).boots == 1
    with Store.open(tmp_path / "b.db") as other:  # another database, same directory: rebuilt
        import_fleet(other, [str(DATA / "multiboot-6.1-cloud-smp2-then-smp1.log")], workers=1)
        rebuilt = refresh_parquet(other, parquet)
    assert rebuilt.boots == 2 and len(list(parquet.glob("part-*.parquet"))) == 1
    assert (parquet / "keep.txt").read_text() == "not bootscope's"


def test_kcidb_export_of_a_stored_run(tmp_path: Path) -> None:
    from bootscope.store import BootRecord, VariantRecord

    with Store.open(tmp_path / "run.db") as store:
        exp = store.create_experiment(
            plan={},
            seed=1,
            accel="tcg",
            accel_reason="",
            host={"hostname": "lab-7"},
            variants=[VariantRecord("a")],
        )
        store.record_boot(exp.id, BootRecord("a", 0, True, "ok", metrics={"kernel_init_s": 9.0}), [])
        store.record_boot(
            exp.id,
            BootRecord("a", 1, False, "ok", kernel_release="6.1.0", metrics={"kernel_init_s": 2.5}),
            [],
        )
        store.record_boot(exp.id, BootRecord("a", 2, False, "panic", reason="Kernel panic"), [])
        document = export_kcidb(store, "lab", "latest")
    assert structure_errors(document) == []
    boots = {t["id"]: t for t in document["tests"] if t["path"] == "boot"}
    assert set(boots) == {f"lab:run-{exp.id}-1", f"lab:run-{exp.id}-2"}  # the warm-up is left out
    assert boots[f"lab:run-{exp.id}-1"]["status"] == "PASS"
    assert boots[f"lab:run-{exp.id}-2"]["status"] == "FAIL"
    assert boots[f"lab:run-{exp.id}-2"]["comment"] == "Kernel panic"
    numbers = [t for t in document["tests"] if t["path"] == "boot.kernel_init_s"]
    assert [n["number"] for n in numbers] == [{"value": 2.5, "unit": "s"}]
    assert boots[f"lab:run-{exp.id}-1"]["misc"]["host"] == "lab-7"

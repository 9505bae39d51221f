"""Store round trips on SQLite and a real PostgreSQL server, and the store's one-line errors."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import threading
from pathlib import Path

import pytest

from bootscope.errors import StoreError
from bootscope.model import LogLine
from bootscope.store import BootRecord, Store, VariantRecord
from bootscope.store import engine as store_engine
from bootscope.store.export import export_csv, export_document

HOSTILE = "<script>alert(1)</script> \x00 \x1b[2J ünï \udcff " + "x" * 5000


def _lines(tag: str) -> list[LogLine]:
    return [
        LogLine(text=f"[    0.000000] Linux version 6.1.0 {tag}", host_ns=1_000_000_000_123),
        LogLine(text=HOSTILE, host_ns=1_000_000_500_000),
        LogLine(text="no host stamp", host_ns=None),
        LogLine(text=f"BOOTSCOPE-MARKER init uptime=3.28 {tag}", host_ns=1_000_004_000_000),
    ]


def _fill(store: Store) -> int:
    exp = store.create_experiment(
        plan={"samples": 2, "variants": ["a", "b"]},
        seed=1234,
        accel="tcg",
        accel_reason="KVM probe hung",
        host={"hostname": "h", "cores": 2},
        variants=[VariantRecord("a", {"append": ""}), VariantRecord("b", {"append": "quiet"})],
    )
    boots = [
        BootRecord("b", 0, True, "ok", metrics={"kernel_init_s": 9.0, "userspace_s": 9.5}),
        BootRecord("a", 1, True, "ok", metrics={"kernel_init_s": 8.0}),
        BootRecord(
            "a", 2, False, "ok", metrics={"kernel_init_s": 1.5, "userspace_s": 2.5, "host_wall_s": 6.0}
        ),
        BootRecord("b", 3, False, "timeout", reason="no marker within 120 s", metrics={}),
        # A disturbed attempt that was re-run: kept, but superseded by attempt 1.
        BootRecord(
            "b",
            4,
            False,
            "ok",
            disturbed=True,
            superseded=True,
            other_cpu_s=1.7,
            metrics={"kernel_init_s": 7.0},
        ),
        BootRecord(
            "b", 4, False, "ok", attempt=1, other_cpu_s=0.01, steal_s=0.0, metrics={"kernel_init_s": 1.25}
        ),
        BootRecord(
            "a",
            5,
            False,
            "ok",
            command=("qemu-system-x86_64", "-m", "512"),
            kernel_release="6.1.0-56-cloud-amd64",
            host_start_ns=42,
            metrics={"kernel_init_s": 1.75, "host_kernel_start_s": 0.5},
        ),
    ]
    for boot in boots:
        store.record_boot(exp.id, boot, _lines(f"{boot.index}.{boot.attempt}"))
    return exp.id


def test_round_trip(store_target: str) -> None:
    with Store.open(store_target) as store:
        exp_id = _fill(store)
        assert store.samples(exp_id, "kernel_init_s") == {"a": [1.5, 1.75], "b": [1.25]}
        assert store.samples(exp_id, "kernel_init_s", include_warmup=True) == {
            "a": [8.0, 1.5, 1.75],
            "b": [9.0, 1.25],
        }
        assert store.samples(exp_id, "host_wall_s") == {"a": [6.0], "b": []}
        assert store.boot_log(exp_id, 4) == _lines("4.1")
        assert store.boot_log(exp_id, 0)[1].text == HOSTILE
        with pytest.raises(StoreError, match="no boot 99"):
            store.boot_log(exp_id, 99)
        boots = store.boots(exp_id)
        assert [(b.index, b.attempt) for b in boots] == [
            (0, 0),
            (1, 0),
            (2, 0),
            (3, 0),
            (4, 0),
            (4, 1),
            (5, 0),
        ]
        last = boots[-1]
        assert last.command == ("qemu-system-x86_64", "-m", "512")
        assert last.kernel_release == "6.1.0-56-cloud-amd64"
        assert last.host_start_ns == 42
        assert boots[4].disturbed and boots[4].superseded and boots[4].other_cpu_s == 1.7
        assert boots[3].reason == "no marker within 120 s"
    # A second process (here: a second open) sees the same data.
    with Store.open(store_target) as again:
        record = again.experiment("latest")
        assert record.id == exp_id and record.seed == 1234 and record.accel_reason == "KVM probe hung"
        assert [v.name for v in record.variants] == ["a", "b"]
        assert record.variants[1].config == {"append": "quiet"}
        assert record.status == "running"
        again.set_status(exp_id, "complete")
        (summary,) = again.list_experiments()
        assert (summary.boots, summary.ok, summary.failed) == (7, 5, 1)
        assert summary.experiment.status == "complete"


def test_export_json_and_csv(store_target: str) -> None:
    with Store.open(store_target) as store:
        exp_id = _fill(store)
        document = json.loads(json.dumps(export_document(store, "latest")))
        experiment = document["experiment"]
        assert {"id", "created", "plan", "seed", "accel", "host"} <= set(experiment)
        assert experiment["id"] == exp_id and experiment["plan"] == {"samples": 2, "variants": ["a", "b"]}
        assert len(document["boots"]) == 7
        third = document["boots"][2]
        assert third["variant"] == "a" and third["index"] == 2 and third["warmup"] is False
        assert third["outcome"] == "ok" and third["reason"] == ""
        assert third["metrics"] == {
            "kernel_init_s": 1.5,
            "userspace_s": 2.5,
            "host_wall_s": 6.0,
            "host_kernel_start_s": None,
        }
        assert third["log"][0] == [1_000_000_000_123, "[    0.000000] Linux version 6.1.0 2.0"]
        assert third["log"][2] == [None, "no host stamp"]
        rows = list(csv.DictReader(io.StringIO(export_csv(store, exp_id))))
        assert len(rows) == 7
        assert rows[2]["kernel_init_s"] == "1.5" and rows[3]["kernel_init_s"] == ""
        assert rows[3]["outcome"] == "timeout" and rows[4]["superseded"] == "1"
        assert rows[6]["host_kernel_start_s"] == "0.5"


def test_duplicate_boot_and_unknown_names_are_store_errors(store_target: str) -> None:
    with Store.open(store_target) as store:
        exp_id = _fill(store)
        with pytest.raises(StoreError) as info:
            store.record_boot(exp_id, BootRecord("a", 2, False, "ok"), [])
        assert "\n" not in str(info.value)
        with pytest.raises(StoreError, match="no variant 'zz'"):
            store.record_boot(exp_id, BootRecord("zz", 9, False, "ok"), [])
        with pytest.raises(StoreError, match="no experiment 77"):
            store.experiment(77)
        with pytest.raises(StoreError, match="number or 'latest'"):
            store.experiment("first")
        # The failed writes left nothing behind.
        assert len(store.boots(exp_id)) == 7


def test_threads_record_concurrently(store_target: str) -> None:
    with Store.open(store_target) as store:
        exp = store.create_experiment(
            plan={}, seed=0, accel="tcg", accel_reason="", host={}, variants=[VariantRecord("a")]
        )

        def worker(start: int) -> None:
            for index in range(start, 40, 4):
                store.record_boot(
                    exp.id,
                    BootRecord("a", index, False, "ok", metrics={"userspace_s": index}),
                    _lines(str(index)),
                )

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert store.samples(exp.id, "userspace_s") == {"a": [float(i) for i in range(40)]}


def test_empty_store_has_no_latest(store_target: str) -> None:
    with Store.open(store_target) as store:
        assert store.list_experiments() == []
        with pytest.raises(StoreError, match="no experiments yet"):
            store.experiment("latest")


def test_sqlite_file_is_in_wal_mode(tmp_path: Path) -> None:
    path = tmp_path / "w.db"
    Store.open(path).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_foreign_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE accounts (id INTEGER)")
    with pytest.raises(StoreError, match="not a bootscope database"):
        Store.open(path)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite at all" * 200)
    with pytest.raises(StoreError, match="not a SQLite database"):
        Store.open(junk)


def test_bad_targets(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        Store.open(tmp_path / "missing" / "x.db")
    with pytest.raises(StoreError, match=r"bad database URL|cannot use database URL"):
        Store.open("nosuchdriver://x/y")
    with pytest.raises(StoreError, match="failed"):
        # Nothing listens on port 1: connection refused, reported in one line.
        Store.open("postgresql+psycopg://nobody@127.0.0.1:1/none?connect_timeout=2")


def test_locked_database_is_a_store_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_engine, "SQLITE_BUSY_TIMEOUT_S", 0.2)
    path = tmp_path / "l.db"
    store = Store.open(path)
    exp = store.create_experiment(
        plan={}, seed=0, accel="tcg", accel_reason="", host={}, variants=[VariantRecord("a")]
    )
    holder = sqlite3.connect(path)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match="locked"):
            store.record_boot(exp.id, BootRecord("a", 0, False, "ok"), [])
    finally:
        holder.rollback()
        holder.close()
    store.record_boot(exp.id, BootRecord("a", 0, False, "ok"), [])
    assert len(store.boots(exp.id)) == 1
    store.close()


def test_a_boot_counts_when_final_ok_and_not_a_warmup() -> None:
    from bootscope.model import Outcome

    counting = BootRecord("v", 0, warmup=False, outcome=Outcome.OK.value)
    assert counting.counts and counting.final_ok
    warmup = BootRecord("v", 1, warmup=True, outcome="ok")
    assert warmup.final_ok and not warmup.counts
    assert not BootRecord("v", 2, warmup=False, outcome="ok", superseded=True).final_ok
    for failed in (Outcome.TIMEOUT, Outcome.PANIC, Outcome.QEMU_ERROR):
        assert not BootRecord("v", 3, warmup=False, outcome=failed.value).final_ok

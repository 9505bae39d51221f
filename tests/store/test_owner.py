"""A running experiment's owner: a SIGKILLed owner shows as gone, other hosts and reused pids, and a
schema 1 database (no owner columns) still opens."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import sqlalchemy as sa

from bootscope.store import Store
from bootscope.store.owner import current_owner, owner_alive, shown_status

CHILD = """
import sys, time
from bootscope.store import Store
from bootscope.store.records import VariantRecord
store = Store.open(sys.argv[1])
exp = store.create_experiment(plan={}, seed=1, accel="tcg", accel_reason="test", host={},
                              variants=[VariantRecord("base")])
print(exp.id, flush=True)
time.sleep(600)
"""


def _runs_json(db: Path) -> list[dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-m", "bootscope", "runs", "--db", str(db), "--json"],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    rows: list[dict[str, object]] = json.loads(done.stdout)
    return rows


def test_a_sigkilled_owner_shows_as_gone(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(db)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        exp_id = int(child.stdout.readline())
        with Store.open(db) as store:
            owner = store.experiment(exp_id).owner
        assert owner is not None and owner.pid == child.pid and owner.started is not None
        assert [row["status"] for row in _runs_json(db)] == ["running"]
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    assert [row["status"] for row in _runs_json(db)] == ["interrupted (owner gone)"]
    with Store.open(db) as store:  # what is stored is unchanged: only the display knows
        assert store.experiment(exp_id).status == "running"


def test_other_host_and_reused_pid(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.db") as store:
        exp = store.create_experiment(plan={}, seed=1, accel="tcg", accel_reason="", host={}, variants=[])
        record = store.experiment(exp.id)
    me = current_owner()
    assert record.owner == me and owner_alive(me) and shown_status(record) == "running"
    elsewhere = replace(record, owner=replace(me, host="build-07"))
    assert shown_status(elsewhere) == "running (on build-07)"
    # Our own pid, but started at another time: a process that reused the owner's pid.
    reused = replace(me, started=f"{me.started}0")
    assert not owner_alive(reused)
    assert shown_status(replace(record, owner=reused)) == "interrupted (owner gone)"
    assert shown_status(replace(record, status="complete", owner=reused)) == "complete"


def test_schema_1_database_opens_and_is_upgraded(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with Store.open(db) as store:
        store.create_experiment(plan={}, seed=1, accel="tcg", accel_reason="", host={}, variants=[])
    # Turn it into what bootscope wrote before owners: no owner columns, schema 1.
    with sqlite3.connect(db) as conn:
        for column in ("owner_pid", "owner_host", "owner_started"):
            conn.execute(f"ALTER TABLE experiments DROP COLUMN {column}")
        conn.execute("ALTER TABLE boots DROP COLUMN placement")  # schema 3's
        conn.execute("ALTER TABLE experiments DROP COLUMN meta")  # schema 4's
        conn.execute("UPDATE bootscope_meta SET value = '1' WHERE key = 'schema'")
    with Store.open(db) as store:
        old = store.experiment(1)
        assert old.owner is None and shown_status(old) == "running"  # no owner recorded: as stored
        store.set_status(1, "running")  # a resume claims it
        assert store.experiment(1).owner == current_owner()
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT value FROM bootscope_meta")).scalar() == "5"
    engine.dispose()

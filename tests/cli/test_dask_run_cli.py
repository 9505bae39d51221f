"""`bootscope run --executor dask://` end to end with real parts: a `dask scheduler` process and two
`bootscope worker` processes (one core each), each in a network namespace of its own with its own
address (a veth link to this host), real QEMU boots of the Debian cloud kernel, and one worker killed
with SIGKILL while it boots.

One run serves both checks of issue 16 (boots spread over both workers, every one stored once; a
worker killed mid-run and the run still ending with exactly 12 boots): two runs of 12 TCG boots
would cost minutes more. Boots end at the kernel's early "Command line:" line (--marker), about
8 s under TCG, which is all the scheduling needs.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
from dask_cluster import namespaced_pair

from bootscope.store import BootRecord, Store

WAIT_LIMIT_S = 400.0
EARLY_MARKER = "Command line: "


def _boots(db: Path) -> list[BootRecord]:
    if not db.exists():
        return []
    try:
        with Store.open(db) as store:
            return store.boots(1)
    except Exception:  # the schema or the experiment may not exist yet
        return []


def _qemu_children(pid: int) -> list[int]:
    """PIDs of live QEMU processes whose parent is ``pid`` (a worker booting a guest)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            name, _, rest = stat.partition(") ")
            if "qemu" in name and rest.split()[1] == str(pid):
                found.append(int(entry.name))
    return found


@pytest.mark.boot
def test_two_workers_share_a_run_and_a_worker_killed_mid_boot_loses_nothing(
    cloud_kernel: Path, tmp_path: Path
) -> None:
    with namespaced_pair(tmp_path) as (cluster, survivor, victim):
        address = cluster.address
        db = tmp_path / "dask.db"
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
        run = subprocess.Popen(
            [sys.executable, "-m", "bootscope", "run", str(cloud_kernel), "-n", "6", "--warmup", "0",
             "--seed", "5", "--accel", "tcg", "--mem", "256", "--marker", EARLY_MARKER,
             "--variant", "a:", "--variant", "b:append=bootscope_test=b",
             "--executor", address.replace("tcp://", "dask://"), "--db", str(db)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        # Kill the victim while it boots a guest, after it stored at least one boot.
        victim_proc = cluster.workers[victim]
        deadline = time.monotonic() + WAIT_LIMIT_S
        while not (
            any(b.placement.get("worker") == victim for b in _boots(db)) and _qemu_children(victim_proc.pid)
        ):
            assert run.poll() is None, run.communicate()[1]
            assert time.monotonic() < deadline, "the victim never stored a boot"
            time.sleep(0.1)
        stored_before = len(_boots(db))
        killed_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        cluster.kill(victim_proc)
        out, err = run.communicate(timeout=WAIT_LIMIT_S)
        assert run.returncode == 0, err
        assert "stored: experiment 1" in out
        with Store.open(db) as store:
            boots = store.boots(1)
            experiment = store.experiment(1)
    assert experiment.status == "complete" and stored_before < 12
    # Exactly 12 boots, each slot once: the one the victim was booting ran again on the survivor.
    assert sorted(b.index for b in boots) == list(range(1, 13))
    assert all(b.outcome == "ok" and not b.superseded and b.attempt == 0 for b in boots), boots
    assert Counter(b.variant for b in boots) == {"a": 6, "b": 6}
    workers = Counter(b.placement["worker"] for b in boots)
    assert set(workers) == {survivor, victim}, workers
    assert all(b.started_at < killed_at for b in boots if b.placement["worker"] == victim)
    # Each worker pinned its guests to its own core, and every boot says where it ran.
    assert {tuple(b.placement["cores"]) for b in boots if b.placement["worker"] == survivor} == {(0,)}
    assert {tuple(b.placement["cores"]) for b in boots if b.placement["worker"] == victim} == {(1,)}
    for boot in boots:
        assert boot.placement["host"] and "load_1m" in boot.placement and "cpu_model" in boot.placement
    assert experiment.host["executor"] == "dask" and set(experiment.host["workers"]) == {survivor, victim}

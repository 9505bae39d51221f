"""`bootscope latency run local --executor dask://` with real parts: a `dask scheduler` process and
two `bootscope worker` processes, each worker in a network namespace of its own with its own
address (a veth link to this host), and real cyclictest runs measured on the workers. Every run is
stored once by the client, both workers measured, and each run says where it ran."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from dask_cluster import Cluster, Namespace

from bootscope import metrics
from bootscope.lab.latency_run import parse_tool_section
from bootscope.parse.latency_transcript import split_transcript
from bootscope.store import Store

RUNS = 4


def test_latency_runs_spread_over_two_workers_in_their_own_namespaces(tmp_path: Path) -> None:
    cluster = Cluster(tmp_path, host="0.0.0.0")
    spaces: list[Namespace] = []
    try:
        spaces = [Namespace.create(1), Namespace.create(2)]
        address = cluster.start_scheduler()
        workers = [
            cluster.start_worker(f"w{k}", cores=str(k), namespace=space) for k, space in enumerate(spaces)
        ]
        db = tmp_path / "latency.db"
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
        done = subprocess.run(
            [sys.executable, "-m", "bootscope", "latency", "run", "local", "--duration", "1s",
             "-n", str(RUNS), "--seed", "3", "--histogram", "2000", "--format", "json", "--db", str(db),
             "--executor", address.replace("tcp://", "dask://")],
            capture_output=True, text=True, env=env, timeout=600,
        )  # fmt: skip
    finally:
        cluster.stop()
        for space in spaces:
            space.remove()
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    # Each worker has its namespace's own address, and both measured.
    assert [w.split("//")[1].split(":")[0] for w in workers] == [s.address for s in spaces]
    with Store.open(db) as store:
        exp_id = document["experiment"]
        runs = [b for b in store.boots(exp_id) if not b.superseded]
        experiment = store.experiment(exp_id)
        logs = {b.index: list(store.boot_log(exp_id, b.index)) for b in runs}
    assert sorted(b.index for b in runs) == list(range(1, RUNS + 1))  # every run stored once
    assert all(b.outcome == "ok" for b in runs), runs
    where = Counter(b.placement["worker"] for b in runs)
    assert set(where) == set(workers), where
    for run in runs:
        assert run.placement["host"] and run.placement["cores"] == [workers.index(run.placement["worker"])]
        assert run.command[0] == "cyclictest"
        # The stored numbers are the tool's own, from the transcript the worker sent back.
        transcript = split_transcript(line.text for line in logs[run.index])
        footer = next(line for line in transcript.sections["tool"] if line.startswith("# Max Latencies:"))
        assert run.metrics[metrics.LATENCY_MAX_US] == max(int(v) for v in footer.split(":")[1].split())
        section = parse_tool_section(transcript, "stored")
        assert all(series.total == series.cycles for series in section.series)
    assert experiment.host["executor"] == "dask" and set(experiment.host["workers"]) == set(workers)
    assert len(document["variants"][0]["runs"]) == RUNS

"""`bootscope latency run local --executor dask://` end to end with real parts: a `dask scheduler`
process and two `bootscope worker` processes (one core each, tests/dask_cluster.py), each in a
network namespace of its own with its own address (a veth link to this host), and real cyclictest
runs of 1 s on the workers' own cores. Every run is stored once by the client, both workers measure,
each record names its worker and the core it measured, and the numbers are the tool's own, as in
tests/lab/test_latency_local.py. Fails (does not skip) when rt-tests is missing."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from cli_here import run_in_process
from dask_cluster import namespaced_pair

from bootscope import metrics
from bootscope.lab.workloads.latency_record import parse_tool_section
from bootscope.parse.latency_transcript import split_transcript
from bootscope.store import Store

RUN_LIMIT_S = 300.0


def test_latency_runs_spread_over_two_workers_each_stored_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with namespaced_pair(tmp_path) as (cluster, first, second):
        address = cluster.address
        db = tmp_path / "latency.db"
        env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
        done = subprocess.run(
            [sys.executable, "-m", "bootscope", "latency", "run", "local", "--tool", "cyclictest",
             "--duration", "1s", "-n", "2", "--histogram", "2000", "--seed", "3",
             "--variant", "a:", "--variant", "b:interval=250", "--allow-unequal",
             "--executor", address.replace("tcp://", "dask://"), "--db", str(db), "--format", "json"],
            capture_output=True, text=True, env=env, timeout=RUN_LIMIT_S,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    exp_id = document["experiment"]
    with Store.open(db) as store:
        boots = store.boots(exp_id)
        experiment = store.experiment(exp_id)
        logs = {boot.index: store.boot_log(exp_id, boot.index) for boot in boots}
    assert experiment.status == "complete" and experiment.accel == "none"
    assert experiment.host["executor"] == "dask" and set(experiment.host["workers"]) == {first, second}
    # Every run stored once, all final, both variants twice.
    assert sorted(b.index for b in boots) == [1, 2, 3, 4]
    assert all(b.outcome == "ok" and not b.superseded and b.attempt == 0 for b in boots), boots
    assert Counter(b.variant for b in boots) == {"a": 2, "b": 2}
    # Both workers measured, each on its own core, and every record says where.
    workers = Counter(b.placement["worker"] for b in boots)
    assert set(workers) == {first, second}, workers
    core_of = {first: 0, second: 1}
    for boot in boots:
        worker = boot.placement["worker"]
        assert boot.placement["cores"] == [core_of[worker]]
        assert boot.placement["host"] and "cpu_model" in boot.placement and "load_1m" in boot.placement
        # The tool ran one thread on the worker's core, its housekeeping thread there too.
        assert f"--affinity={core_of[worker]}" in boot.command
        assert f"--mainaffinity={core_of[worker]}" in boot.command
        transcript = split_transcript(line.text for line in logs[boot.index])
        assert transcript.facts()["kernel_release"] == os.uname().release
        run = parse_tool_section(transcript, "stored")
        assert len(run.series) == 1
        for series in run.series:
            assert series.counts is not None and series.total == series.cycles  # rows + overflow = cycles
        # The stored max is the tool's own summary line "# Max Latencies:".
        footer = next(line for line in transcript.sections["tool"] if line.startswith("# Max Latencies:"))
        assert boot.metrics[metrics.LATENCY_MAX_US] == max(int(v) for v in footer.split(":")[1].split())
    # The JSON names each run's worker; `latency show`'s table says which worker measured which runs.
    runs = [run for variant in document["variants"] for run in variant["runs"]]
    assert len(runs) == 4 and all(run["outcome"] == "ok" for run in runs)
    assert {run["placement"]["worker"] for run in runs} == {first, second}
    assert run_in_process("latency", "show", str(exp_id), "--db", str(db)) == 0
    table = capsys.readouterr().out
    header = next(line for line in table.splitlines() if line.startswith("variant"))
    assert "measured on (runs)" in header
    lines = table.splitlines()
    for variant in ("a", "b"):
        # A variant's row and the lines its folded "measured on" cell continues on (80 columns).
        first_line = next(i for i, line in enumerate(lines) if line.startswith(f"{variant} "))
        rest = itertools.takewhile(
            lambda line: line.startswith(" ") and line.strip(), lines[first_line + 1 :]
        )
        # Folding may break a cell at any of its spaces (the worker's address and its run count land
        # on two lines when the address is long), so the words are compared, not the spacing.
        row = " ".join(" ".join([lines[first_line], *rest]).split())
        places = Counter(b.placement["worker"] for b in boots if b.variant == variant)
        for worker, n in places.items():
            assert f"{worker} ({n})" in row, table

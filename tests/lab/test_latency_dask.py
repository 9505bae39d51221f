"""Latency runs and Dask: a slot's cores pin the local tool (pure), and a latency run interrupted on
this host resumes with `latency run --resume ID --executor dask://` on a real local Dask cluster
(two worker processes) with real 1 s cyclictest runs: the missing runs are measured on the workers,
each stored once with its worker in its placement; and QEMU-place latency runs on the same cluster
with a fake guest that prints a real cyclictest transcript: each guest pinned to its slot's core."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_here import run_in_process
from dask_cluster import GUEST_CYCLICTEST, LatencyGuestFake
from latency_places import CtrlCOnSecondRun

from bootscope import metrics
from bootscope.lab import runner
from bootscope.lab.executors.dask import dask_executor
from bootscope.lab.plans.latency import build_latency_plan
from bootscope.lab.plans.latency_tools import LatencySettings, tool_argv
from bootscope.lab.targets.fake import FakeTarget
from bootscope.lab.workloads.latency import LatencyWorkload
from bootscope.lab.workloads.latency_place import pinned_settings
from bootscope.store import Store
from bootscope.store.records import STATUS_COMPLETE, STATUS_INTERRUPTED


def test_a_slots_cores_pin_the_tool_and_its_main_thread() -> None:
    base = LatencySettings()
    assert pinned_settings(base, None) == base  # this host, no slot cores: cyclictest -S as ever
    on_one = pinned_settings(base, (1,))
    assert on_one.affinity == "1" and on_one.main_cpu == 1
    argv = tool_argv(on_one)
    assert "-S" not in argv and "-t" in argv and "--affinity=1" in argv and "--mainaffinity=1" in argv
    on_two = pinned_settings(base, (3, 2))
    assert on_two.affinity == "2,3" and on_two.main_cpu == 2
    kept_main = pinned_settings(LatencySettings(main_cpu=3), (2, 3))
    assert kept_main.main_cpu == 3  # the housekeeping CPU stays where it was asked, if it is ours
    own = LatencySettings(affinity="0", main_cpu=0)
    assert pinned_settings(own, (1,)) == own  # a variant's own affinity is left as given
    assert pinned_settings(LatencySettings(main_cpu=None), (1,)).main_cpu is None


def test_a_latency_run_cut_here_resumes_on_dask_workers(
    two_workers: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "r.db"
    plan = build_latency_plan("local", LatencySettings(duration_s=1, histogram_us=500), [], 3, seed=4)
    with Store.open(db) as store:
        with pytest.raises(KeyboardInterrupt):
            runner.start(LatencyWorkload(plan, places={"base": CtrlCOnSecondRun()}), FakeTarget(), store)
        exp_id = store.list_experiments()[-1].experiment.id
        assert store.experiment(exp_id).status == STATUS_INTERRUPTED
        assert [b.index for b in store.boots(exp_id)] == [1]
    executor = two_workers.replace("tcp://", "dask://")
    code = run_in_process(
        "latency", "run", "--resume", str(exp_id), "--executor", executor, "--db", str(db), "--format", "json"
    )
    out = capsys.readouterr().out
    assert code == 0, out
    document = json.loads(out)
    assert [run["index"] for run in document["variants"][0]["runs"]] == [1, 2, 3]
    with Store.open(db) as store:
        assert store.experiment(exp_id).status == STATUS_COMPLETE
        boots = {b.index: b for b in store.boots(exp_id)}
    assert sorted(boots) == [1, 2, 3]  # each run stored once
    assert all(b.outcome == "ok" and not b.superseded for b in boots.values())
    assert all(b.metrics[metrics.LATENCY_MAX_US] is not None for b in boots.values())
    assert "worker" not in boots[1].placement  # measured here, before the run was cut
    workers = {str(boots[i].placement["worker"]) for i in (2, 3)}
    assert all(worker.startswith("tcp://127.0.0.1:") for worker in workers)
    # A worker's slot takes every core it may use: its tool measured them all.
    for index in (2, 3):
        cores = boots[index].placement["cores"]
        assert cores == sorted(os.sched_getaffinity(0))
        assert f"--affinity={','.join(map(str, cores))}" in boots[index].command


def test_guest_latency_runs_on_dask_are_pinned_and_stored_once(two_workers: str, tmp_path: Path) -> None:
    plan = build_latency_plan(
        "fake-kernel", LatencySettings(duration_s=1, histogram_us=200), ["a:", "b:append=b=1"], 2,
        seed=6, accel="tcg", smp=1,
    )  # fmt: skip
    with (
        dask_executor(two_workers, target_factory=LatencyGuestFake) as executor,
        Store.open(tmp_path / "g.db") as store,
    ):
        result = runner.start(LatencyWorkload(plan), FakeTarget(), store, executor=executor)
        boots = store.boots(result.experiment.id)
        logs = {b.index: [line.text for line in store.boot_log(result.experiment.id, b.index)] for b in boots}
    assert result.status == STATUS_COMPLETE and result.experiment.accel == "tcg"
    assert sorted(b.index for b in boots) == [1, 2, 3, 4]
    assert sorted(b.variant for b in boots) == ["a", "a", "b", "b"]
    footer = next(line for line in GUEST_CYCLICTEST.read_text().splitlines() if line.startswith("# Max Lat"))
    for boot in boots:
        assert boot.outcome == "ok" and not boot.superseded, boot
        assert boot.metrics[metrics.LATENCY_MAX_US] == max(int(v) for v in footer.split(":")[1].split())
        assert str(boot.placement["worker"]).startswith("tcp://127.0.0.1:")
        # The guest's emulator was pinned to the one core of its slot that the record names.
        cores = boot.placement["cores"]
        assert len(cores) == 1 and f"pinned={cores[0]}" in logs[boot.index]
        assert ("cmdline=quiet b=1" in logs[boot.index]) == (boot.variant == "b")

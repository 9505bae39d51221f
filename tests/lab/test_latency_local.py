"""A real `bootscope latency run local --tool cyclictest --duration 3s -n 2` on this machine: every
run stored with its whole transcript, its numbers equal to the tool's own summary, its histogram
complete, and the facts it ran under recorded. Fails (does not skip) when rt-tests is missing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_here import run_in_process
from latency_places import CtrlCOnSecondRun

from bootscope import metrics
from bootscope.lab import runner
from bootscope.lab.plans.latency import build_latency_plan
from bootscope.lab.plans.latency_tools import LatencySettings
from bootscope.lab.targets.fake import FakeTarget
from bootscope.lab.workloads.latency import LatencyWorkload
from bootscope.lab.workloads.latency_record import parse_tool_section
from bootscope.parse.latency_transcript import interrupt_counts, split_transcript
from bootscope.store import Store
from bootscope.store.records import STATUS_COMPLETE, STATUS_INTERRUPTED


def test_real_cyclictest_runs_are_stored_and_match_their_own_footers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "latency.db"
    code = run_in_process(
        "latency", "run", "local", "--tool", "cyclictest", "--duration", "3s", "-n", "2",
        "--histogram", "2000", "--db", str(db), "--format", "json", "--seed", "1",
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    document = json.loads(out)
    runs = document["variants"][0]["runs"]
    assert len(runs) == 2 and all(run["outcome"] == "ok" for run in runs)
    with Store.open(db) as store:
        exp_id = document["experiment"]
        boots = store.boots(exp_id)
        assert len(boots) == 2
        for boot in boots:
            assert (
                boot.command[0] == "cyclictest"
                and "-h" in boot.command
                and boot.kernel_release == os.uname().release
            )
            transcript = split_transcript(line.text for line in store.boot_log(exp_id, boot.index))
            run = parse_tool_section(transcript, "stored")
            assert len(run.series) == os.cpu_count()
            for series in run.series:
                assert series.counts is not None and series.total == series.cycles  # rows + overflow = cycles
            # The numbers equal the tool's own summary line "# Max Latencies:".
            footer = next(line for line in transcript.sections["tool"] if line.startswith("# Max Latencies:"))
            assert boot.metrics[metrics.LATENCY_MAX_US] == max(int(v) for v in footer.split(":")[1].split())
            facts = transcript.facts()
            assert facts["kernel_release"] == os.uname().release and facts["preemption"]
            assert facts["cmdline"] == Path("/proc/cmdline").read_text().strip()
            assert facts["tool_command"].startswith("cyclictest -S -m -p 95 -i 200")
            before = interrupt_counts(transcript.text("interrupts-before"))
            after = interrupt_counts(transcript.text("interrupts-after"))
            assert before and sum(after.values()) >= sum(before.values())
            assert (
                len(json.loads(transcript.text("tool-json"))["thread"]) == os.cpu_count()
            )  # --json kept too


def test_an_interrupted_run_keeps_its_finished_run_and_resumes_with_real_cyclictest(tmp_path: Path) -> None:
    plan = build_latency_plan("local", LatencySettings(duration_s=1, histogram_us=200), [], 3, seed=2)
    with Store.open(tmp_path / "r.db") as store:
        with pytest.raises(KeyboardInterrupt):
            runner.start(LatencyWorkload(plan, places={"base": CtrlCOnSecondRun()}), FakeTarget(), store)
        exp_id = store.list_experiments()[-1].experiment.id
        assert store.experiment(exp_id).status == STATUS_INTERRUPTED
        assert [b.index for b in store.boots(exp_id)] == [1]  # the finished run is kept
        result = runner.resume(exp_id, store, FakeTarget())  # the stored plan, real cyclictest
        assert result.status == STATUS_COMPLETE
        boots = store.boots(exp_id)
        assert sorted(b.index for b in boots) == [1, 2, 3] and all(b.outcome == "ok" for b in boots)
        assert all(b.metrics[metrics.LATENCY_MAX_US] is not None for b in boots)

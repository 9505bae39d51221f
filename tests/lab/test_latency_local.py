"""A real `bootscope latency run local --tool cyclictest --duration 3s -n 2` on this machine: every
run stored with its whole transcript, its numbers equal to the tool's own summary, its histogram
complete, and the facts it ran under recorded. Fails (does not skip) when rt-tests is missing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from cli_here import run_in_process

from bootscope import metrics
from bootscope.lab.latency_run import parse_tool_section
from bootscope.parse.latency_transcript import interrupt_counts, split_transcript
from bootscope.store import Store


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

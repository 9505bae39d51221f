"""One real A/B in QEMU: the pinned Debian cloud kernel against the pinned PREEMPT_RT kernel,
cyclictest under hackbench in a busybox guest (tools and libraries copied from the host), one short
run a side (a run is a boot, the tool, the load and the guest's shutdown: about 80 s under TCG here).
Checks every run is stored with its histogram and the facts it ran under. TCG latencies are not
hardware latencies: this proves the machinery, not which kernel is better (see the README)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_here import run_in_process

from bootscope import metrics
from bootscope.lab.workloads.latency_record import parse_tool_section
from bootscope.parse.latency_transcript import interrupt_counts, split_transcript
from bootscope.store import Store

# Its guests' latencies are host time: in `make test` it runs alone (scripts/lanes.py).
pytestmark = pytest.mark.alone


@pytest.mark.boot
def test_cloud_against_rt_kernel_under_hackbench_in_qemu(
    cloud_kernel: Path, rt_kernel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "ab.db"
    code = run_in_process(
        "latency", "run", str(cloud_kernel), "--variant", "cloud", "--variant", f"rt:kernel={rt_kernel}",
        "--load", "hackbench", "--duration", "3s", "-n", "1", "--accel", "tcg", "--seed", "4",
        "--db", str(db), "--format", "json",
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0, out
    document = json.loads(out)
    exp_id = document["experiment"]
    with Store.open(db) as store:
        boots = store.boots(exp_id)
        assert sorted(b.variant for b in boots) == ["cloud", "rt"]
        for boot in boots:
            assert boot.outcome == "ok", boot.reason
            assert boot.accel == "tcg" and boot.command[0] == "cyclictest"
            transcript = split_transcript(line.text for line in store.boot_log(exp_id, boot.index))
            facts = transcript.facts()
            run = parse_tool_section(transcript, "stored")
            assert len(run.series) == 2  # -S: one thread per guest CPU
            for series in run.series:
                assert series.counts is not None and series.total == series.cycles
            footer = next(line for line in transcript.sections["tool"] if line.startswith("# Max Latencies:"))
            assert boot.metrics[metrics.LATENCY_MAX_US] == max(int(v) for v in footer.split(":")[1].split())
            assert facts["load_command"].startswith("hackbench") and facts["cpus"] == "2"
            assert (
                facts["qemu_command"].startswith("qemu-system-x86_64")
                and "-accel tcg" in facts["qemu_command"]
            )
            assert "quiet" in facts["cmdline"] and facts["tool_command"] == " ".join(boot.command)
            if boot.variant == "rt":
                assert boot.kernel_release == facts["kernel_release"] and boot.kernel_release.endswith(
                    "-rt-amd64"
                )
                assert facts["realtime"] == "1" and "PREEMPT_RT" in facts["kernel_version"]
            else:
                assert facts["kernel_release"].endswith("-cloud-amd64") and facts["realtime"] == ""
            before = interrupt_counts(transcript.text("interrupts-before"))
            after = interrupt_counts(transcript.text("interrupts-after"))
            assert after["LOC"] > before["LOC"]  # the local timer fired while the tool ran
    runs = {v["name"]: v["runs"] for v in document["variants"]}
    assert all(len(r) == 1 and all(x["max_us"] is not None for x in r) for r in runs.values())
    # One run a side: nothing to compare across runs, and the output says so (no made-up verdict).
    assert "rt" not in document["comparisons"]
    assert any("fewer than 2 resolved runs a side" in w for w in document["warnings"]), document["warnings"]

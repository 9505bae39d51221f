"""Latency over SSH without the network: the SSH machine's own commands (its facts, a scratch
directory, the tool, the tool's JSON) run by a local shell in place of ssh, through the real runner
with real cyclictest (rt-tests) on this host. The SSH machine reads the same facts as LocalHost (one
transcript for both). The real machine over SSH is in test_ssh_target.py. Fails (does not skip)
when rt-tests is missing."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from bootscope.lab import runner
from bootscope.lab.plans.latency import build_latency_plan
from bootscope.lab.plans.latency_tools import LatencySettings
from bootscope.lab.targets.base import ShellResult
from bootscope.lab.targets.localhost import LocalHost
from bootscope.lab.targets.ssh.client import parse_ssh_url
from bootscope.lab.targets.ssh.machine import SshMachine
from bootscope.lab.workloads.latency import LatencyWorkload
from bootscope.metrics import LATENCY_MAX_US
from bootscope.parse.latency_transcript import section_line
from bootscope.store import Store

URL = "ssh://root@shell.invalid"


class ShellMachine(SshMachine):
    """An SSH machine whose commands a local shell runs (what ssh would hand the remote shell)."""

    def run(self, command: str, timeout_s: float, connect_timeout_s: float | None = None) -> ShellResult:
        started_ns = time.monotonic_ns()
        done = subprocess.run(
            ["sh", "-c", command], capture_output=True, text=True, timeout=timeout_s, check=False
        )
        return ShellResult(done.returncode, done.stdout, done.stderr, started_ns, time.monotonic_ns())


def test_the_ssh_machine_reads_the_facts_localhost_reads() -> None:
    assert ShellMachine(parse_ssh_url(URL)).kernel_facts() == LocalHost().kernel_facts()


def test_a_latency_run_on_an_ssh_machine_goes_through_its_commands(tmp_path: Path) -> None:
    machine = ShellMachine(parse_ssh_url(URL))
    plan = build_latency_plan(URL, LatencySettings(duration_s=1, histogram_us=200), [], 2, seed=3)
    with Store.open(tmp_path / "runs.db") as store:
        result = runner.start(LatencyWorkload(plan), machine, store)
        assert result.boots_run == 2 and result.experiment.accel == "none"
        boots = store.boots(result.experiment.id)
        for boot in boots:
            assert boot.outcome == "ok", boot.reason
            assert boot.metrics[LATENCY_MAX_US] is not None
            log = [line.text for line in store.boot_log(result.experiment.id, boot.index)]
            (command,) = [line for line in log if line.startswith("tool_command=")]
            assert (
                command.startswith("tool_command=cyclictest ") and "--json=/tmp/bootscope-latency-" in command
            )
            assert section_line("tool-json") in log
    assert not list(Path("/tmp").glob("bootscope-latency-*/cyclictest.json"))  # scratch removed

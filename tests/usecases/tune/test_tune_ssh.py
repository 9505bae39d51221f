"""`bootscope tune ssh://...` through the one runner on a fake rebooting machine (no SSH, no QEMU;
the real SSH reboot workload is tested on the served image in tests/lab/test_ssh_target.py, and a
real tune of that machine is in bench/RESULTS.md): the baseline is the machine's own command line
without the boot loader's BOOT_IMAGE=, every arm a kexec reboot loading its whole command line, and
--resume reboots nothing more. The expected kexec orders are counted from the machine's commands."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from bootscope.lab.plans.settings import GivenSettings
from bootscope.lab.targets.fake import FakeRebootingMachine
from bootscope.lab.where import SSH, Where
from bootscope.store import Store
from bootscope.usecases.tune.request import TuneRequest
from bootscope.usecases.tune.search import resume_tune, tune
from bootscope.usecases.tune.ssh import ssh_request, ssh_runner
from tests.cli_here import run_in_process

OWN = "root=/dev/vda1 ro"  # FakeRebootingMachine's /proc/cmdline, less its BOOT_IMAGE=/vmlinuz
_LOADED = re.compile(r"--command-line=('[^']*'|\S+)")


def _request(machine: FakeRebootingMachine, **given: object) -> TuneRequest:
    fields = {
        "kernel": "", "append": "loglevel=7", "metric": "kernel_init_s", "boots_per_arm": 4, "alpha": 0.05,
        "tries": ("quiet", "-ro"), "settings": GivenSettings(seed=3, timeout_s=5, warmup_per_variant=0),
        "where": Where(SSH, machine.name), **given,
    }  # fmt: skip
    return TuneRequest(**fields)  # type: ignore[arg-type]


def _loaded(machine: FakeRebootingMachine) -> list[str]:
    found = [_LOADED.search(c) for c in machine.commands if "kexec -l" in c]
    return [m[1].strip("'") for m in found if m is not None]


def test_a_machine_is_tuned_by_kexec_reboots_with_each_knobs_whole_command_line(tmp_path: Path) -> None:
    machine = FakeRebootingMachine()
    request = ssh_request(_request(machine), target=machine)
    assert request.append == f"{OWN} loglevel=7"  # the machine's own line, BOOT_IMAGE= left out
    with Store.open(tmp_path / "t.db") as store:
        result = tune(request, store, runner=ssh_runner(request, store, None, target=machine))
        configs = {v.name: v.config for v in store.experiment(result.runs[1]).variants}
    assert {t.knob.name for t in result.tried} == {"+quiet", "-ro"}
    assert all(t.verdict.boots == 4 and t.verdict.decision != "rejected" for t in result.tried)
    loads = _loaded(machine)
    assert machine.reboots == len(loads) == result.boots_spent == 1 + 3 * 4
    base = f"{OWN} loglevel=7"
    assert loads.count(base) == 1 + 4 and loads.count(f"{base} quiet") == 4
    assert loads.count("root=/dev/vda1 loglevel=7") == 4  # -ro took the machine's own word away
    assert all(c["reuse_cmdline"] is False and c["reboot"] == "kexec" for c in configs.values())
    # --resume takes the stored runs again: no reboot more
    with Store.open(tmp_path / "t.db") as store:
        again = resume_tune("latest", store, runner=ssh_runner(request, store, None, target=machine))
    assert machine.reboots == 1 + 3 * 4 and again.runs == result.runs


def test_a_machines_tune_refuses_a_guests_options_and_ssh_options_need_a_machine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    machine = FakeRebootingMachine()
    with pytest.raises(Exception, match="--image is a QEMU guest's option"):
        ssh_request(replace(_request(machine), image="default"), target=machine)
    assert machine.commands == []  # refused before the machine was asked anything
    db = str(tmp_path / "t.db")
    for args, message in (
        (("ssh://root@example.invalid", "--smp", "2"), "--smp is a QEMU guest's option"),
        (("ssh://example.invalid",), "example.invalid"),
        (("/nonexistent/bzImage", "--identity", "/nonexistent/key"), "are for a machine over SSH"),
        (("ssh://root@example.invalid", "--console", "cat", "--console-device", "/dev/null"), "not both"),
    ):
        code = run_in_process("tune", *args, "-n", "4", "--db", db)
        err = capsys.readouterr().err.strip()
        assert code == 2 and message in err and len(err.splitlines()) == 1, (args, err)

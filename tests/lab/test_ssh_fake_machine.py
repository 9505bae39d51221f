"""The SSH reboot workload through the real runner on a fake rebooting machine (no SSH, no QEMU): a
reboot stored as one boot, a machine that does not come back (a timeout that stops the run, its
slot left for --resume), the resume once it is back; and the one-line error of a target without the
capability a workload needs, said before anything is stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from bootscope.errors import BootError, InputError
from bootscope.lab import runner
from bootscope.lab.plans.boot import Plan
from bootscope.lab.plans.boot_variant import VariantSpec
from bootscope.lab.plans.ssh import SshPlan, SshVariant, validate_ssh_plan
from bootscope.lab.targets.fake import FAKE_RELEASE, FakeRebootingMachine
from bootscope.lab.targets.localhost import LocalHost
from bootscope.lab.workloads.boot import BootWorkload
from bootscope.lab.workloads.ssh import SshWorkload
from bootscope.metrics import REBOOT_DOWNTIME_S, REBOOT_SHUTDOWN_S
from bootscope.store import Store
from bootscope.store.records import STATUS_COMPLETE, STATUS_INTERRUPTED
from bootscope.usecases.run import start_ssh


def _plan(machine: FakeRebootingMachine, samples: int) -> SshPlan:
    return validate_ssh_plan(
        SshPlan(
            target=machine.name,
            variants=(SshVariant("default"),),
            samples_per_variant=samples,
            seed=7,
            timeout_s=1.5,
        )
    )


def test_a_reboot_a_timeout_and_a_resume_through_the_runner(tmp_path: Path) -> None:
    machine = FakeRebootingMachine(stay_away_after=2)
    with Store.open(tmp_path / "runs.db") as store:
        with pytest.raises(BootError, match=r"did not come back.*--resume"):
            start_ssh(_plan(machine, 3), store, target=machine)
        (summary,) = store.list_experiments()
        experiment = summary.experiment
        assert experiment.status == STATUS_INTERRUPTED
        first, second = store.boots(experiment.id)
        assert (first.outcome, first.kernel_release) == ("ok", FAKE_RELEASE)
        assert first.metrics[REBOOT_DOWNTIME_S] > 0 and REBOOT_SHUTDOWN_S in first.metrics
        assert second.outcome == "timeout" and "did not come back within 1.5 s" in second.reason
        assert any("kexec -l" in command for command in machine.commands)  # --reboot kexec by default

        machine.come_back()
        result = runner.resume(experiment.id, store, machine)
        assert result.status == STATUS_COMPLETE and result.boots_run == 2
        boots = store.boots(experiment.id)
        final = [boot for boot in boots if not boot.superseded]
        assert [boot.index for boot in final] == [1, 2, 3]
        assert all(boot.outcome == "ok" for boot in final)
        assert [boot.outcome for boot in boots if boot.superseded] == ["timeout"]
        assert machine.reboots == 4  # three reboots that came back, one that did not


def test_a_target_without_the_capability_is_one_line_before_anything_is_stored(tmp_path: Path) -> None:
    plan = Plan(variants=(VariantSpec(name="a", kernel="k"),), samples_per_variant=1, seed=1)
    with Store.open(tmp_path / "runs.db") as store:
        with pytest.raises(InputError) as caught:
            runner.start(BootWorkload(plan), LocalHost(), store)
        assert str(caught.value) == (
            "the boot workload needs a target that boots QEMU guests; local does not"
        )
        ssh = SshWorkload(_plan(FakeRebootingMachine(), 1))
        with pytest.raises(InputError, match="needs a target that reboots; local does not"):
            ssh.prepare(LocalHost(), "hardware")
        assert store.list_experiments() == []

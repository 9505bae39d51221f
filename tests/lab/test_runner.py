"""The one runner on the fake target (no QEMU, milliseconds): schedule, -j, resume after Ctrl-C,
quiet-host re-runs, the kexec workload's chains and their resume, failures as records."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from fake_targets import interrupted_at

from bootscope.errors import BootError, InputError
from bootscope.lab import slots
from bootscope.lab.plans.boot import Plan, VariantSpec, plan_from_dict, validate_plan
from bootscope.lab.plans.kexec import KexecPlan, KexecVariant
from bootscope.lab.plans.schedule import build_schedule
from bootscope.lab.qemu.kexec_chain import KexecOptions
from bootscope.lab.qemu.process import BootConfig
from bootscope.lab.targets.base import LineCallback, StartCallback
from bootscope.lab.targets.fake import FakeTarget
from bootscope.lab.workloads.boot import BootWorkload
from bootscope.lab.workloads.kexec import INTERRUPTED_REASON
from bootscope.metrics import KERNEL_INIT_S, KEXEC_DOWNTIME_S, KEXEC_METRICS, USERSPACE_S
from bootscope.model import Boot, LogLine
from bootscope.store import Store
from bootscope.usecases.run import resume_experiment, start_experiment, start_kexec


def _plan(samples: int = 4, warmup: int = 1, jobs: int = 1, **more: object) -> Plan:
    return Plan(
        variants=(
            VariantSpec("fast", "k", append="fake.init_ms=1000"),
            VariantSpec("slow", "k", append="fake.init_ms=1500"),
        ),
        seed=7,
        samples_per_variant=samples,
        warmup_per_variant=warmup,
        jobs=jobs,
        **more,  # type: ignore[arg-type]
    )


def test_every_slot_is_stored_once_in_the_seeded_interleaved_order(tmp_path: Path) -> None:
    with Store.open(tmp_path / "r.db") as store:
        result = start_experiment(_plan(), store, target=FakeTarget())
        boots = store.boots(result.experiment.id)
        samples = store.samples(result.experiment.id, KERNEL_INIT_S)
    order = build_schedule(["fast", "slow"], 4, 1, 7)
    assert [(b.index, b.variant, b.warmup) for b in boots] == [(s.index, s.variant, s.warmup) for s in order]
    assert result.status == "complete" and result.boots_run == 10
    # The fake's times come from each variant's command line: the metrics were read from the console.
    assert all(1.0 <= v < 1.006 for v in samples["fast"]) and all(1.5 <= v < 1.506 for v in samples["slow"])
    for boot in boots:
        assert boot.metrics[USERSPACE_S] == pytest.approx(boot.metrics[KERNEL_INIT_S] + 0.05, abs=1e-3)


def test_parallel_jobs_store_every_slot_once(tmp_path: Path) -> None:
    target = FakeTarget()
    with Store.open(tmp_path / "r.db") as store:
        result = start_experiment(_plan(samples=6, jobs=2), store, target=target)
        boots = store.boots(result.experiment.id)
    assert target.boots == 14
    assert sorted(b.index for b in boots) == list(range(1, 15))
    assert Counter(b.variant for b in boots if not b.warmup) == {"fast": 6, "slow": 6}


def test_ctrl_c_keeps_finished_slots_and_resume_runs_only_the_missing_ones(tmp_path: Path) -> None:
    with Store.open(tmp_path / "r.db") as store:
        with pytest.raises(KeyboardInterrupt):
            start_experiment(_plan(), store, target=interrupted_at(4))
        first = store.list_experiments()[0].experiment
        assert first.status == "interrupted"
        assert [b.index for b in store.boots(first.id)] == [1, 2, 3]
        again = FakeTarget()
        result = resume_experiment(first.id, store, target=again)
        boots = store.boots(first.id)
    assert again.boots == 7 and result.boots_run == 7 and result.experiment.status == "complete"
    order = build_schedule(["fast", "slow"], 4, 1, first.seed)
    assert [(b.index, b.variant) for b in boots] == [(s.index, s.variant) for s in order]


def test_a_failed_start_stores_nothing_and_marks_the_run_interrupted(tmp_path: Path) -> None:
    plan = Plan(variants=(VariantSpec("bad", "k", append="fake.fail=error"),), seed=1, samples_per_variant=2)
    with Store.open(tmp_path / "r.db") as store:
        with pytest.raises(BootError):
            start_experiment(plan, store, target=FakeTarget())
        summary = store.list_experiments()[0]
    assert summary.boots == 0 and summary.experiment.status == "interrupted"


def test_failed_boots_are_records_with_their_outcome(tmp_path: Path) -> None:
    plan = Plan(
        variants=(VariantSpec("ok", "k"), VariantSpec("panics", "k", append="fake.fail=panic")),
        seed=3,
        samples_per_variant=2,
        warmup_per_variant=0,
    )
    with Store.open(tmp_path / "r.db") as store:
        result = start_experiment(plan, store, target=FakeTarget())
        boots = store.boots(result.experiment.id)
    assert Counter((b.variant, b.outcome) for b in boots) == {("ok", "ok"): 2, ("panics", "panic"): 2}
    assert all(KERNEL_INIT_S not in b.metrics for b in boots if b.outcome == "panic")


def test_quiet_host_reruns_a_disturbed_slot_and_keeps_the_attempts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every measurement counts as disturbed and every host as idle: each slot runs to the attempt limit.
    monkeypatch.setattr(slots, "DISTURBED_OTHER_CPUS", -1.0)
    monkeypatch.setattr(slots, "IDLE_OTHER_CPUS", 1e9)
    target = FakeTarget()
    with Store.open(tmp_path / "r.db") as store:
        result = start_experiment(_plan(samples=1, warmup=0, quiet_host=True), store, target=target)
        boots = store.boots(result.experiment.id)
    attempts = slots.QUIET_HOST_ATTEMPTS
    assert target.boots == 2 * attempts
    for index in (1, 2):
        mine = [b for b in boots if b.index == index]
        assert [b.attempt for b in mine] == list(range(attempts))
        assert [b.superseded for b in mine] == [True] * (attempts - 1) + [False]
        assert all(b.disturbed for b in mine)


class _HangsOnce(FakeTarget):
    """A fake target whose first boot of a good command line hangs (a timeout)."""

    hung: bool = False

    def boot(self, config: BootConfig, on_line: LineCallback | None, on_start: StartCallback | None) -> Boot:
        if not self.hung and "fake.fail" not in config.append:
            self.hung = True
            config = replace(config, append=f"{config.append} fake.fail=timeout")
        return super().boot(config, on_line, on_start)


def test_retries_boot_a_failed_slot_again_and_keep_the_failed_boot(tmp_path: Path) -> None:
    # The good variant's first boot hangs once (a guest hang, as a two-vCPU TCG guest does about once
    # in 300 boots); --retries 2 boots that slot again and keeps the hang, superseded. A variant that
    # always fails uses every retry and keeps its last failure as the slot's record.
    target = _HangsOnce()
    plan = Plan(
        variants=(VariantSpec("ok", "k"), VariantSpec("hangs", "k", append="fake.fail=timeout")),
        seed=3,
        samples_per_variant=2,
        warmup_per_variant=0,
        retries=2,
    )
    with Store.open(tmp_path / "r.db") as store:
        result = start_experiment(plan, store, target=target)
        boots = store.boots(result.experiment.id)
    first_ok = min(b.index for b in boots if b.variant == "ok")
    assert [(b.attempt, b.outcome, b.superseded) for b in boots if b.index == first_ok] == [
        (0, "timeout", True),
        (1, "ok", False),
    ]
    for index in {b.index for b in boots if b.variant == "hangs"}:
        mine = [b for b in boots if b.index == index]
        assert [(b.attempt, b.outcome, b.superseded) for b in mine] == [
            (0, "timeout", True),
            (1, "timeout", True),
            (2, "timeout", False),
        ]
    assert target.boots == 1 + 2 + 3 + 3  # ok slots 1 + 2 (a hang and its retry), hangs 3 + 3
    assert sum("booting it again (--retries)" in note for note in result.notes) == 1 + 2 + 2
    ok = [b for b in boots if b.variant == "ok" and not b.superseded]
    assert len(ok) == 2 and all(b.outcome == "ok" for b in ok)


def test_negative_retries_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="--retries cannot be negative"):
        validate_plan(_plan(retries=-1))


def _kexec_plan(hops: int = 2, chains: int = 3, jobs: int = 1) -> KexecPlan:
    return KexecPlan(
        from_spec="from",
        variants=(
            KexecVariant("checks", "to", append="fake.init_ms=800"),
            KexecVariant("nochecks", "to", KexecOptions(no_checks=True), append="fake.init_ms=600"),
        ),
        hops=hops,
        seed=5,
        chains=chains,
        accel="tcg",
        jobs=jobs,
    )


def test_kexec_chains_store_every_kernel_at_a_fixed_index(tmp_path: Path) -> None:
    with Store.open(tmp_path / "k.db") as store:
        result = start_kexec(_kexec_plan(jobs=2), store, target=FakeTarget())
        boots = store.boots(result.experiment.id)
        downtimes = store.samples(result.experiment.id, KEXEC_DOWNTIME_S)
    assert sorted(b.index for b in boots) == list(range(1, 19))  # 6 chains x (1 + 2 hops)
    assert {name: len(values) for name, values in downtimes.items()} == {"checks": 6, "nochecks": 6}
    # The first kernel of each chain (index 1, 4, 7, ...) is its warm-up; the others are reboots.
    assert [b.warmup for b in sorted(boots, key=lambda b: b.index)] == [True, False, False] * 6
    reboot = next(b for b in boots if not b.warmup)
    assert set(KEXEC_METRICS) <= set(reboot.metrics)
    assert all(values and min(values) > 0 for values in downtimes.values())


def test_kexec_resume_runs_the_chains_that_never_started(tmp_path: Path) -> None:
    with Store.open(tmp_path / "k.db") as store:
        with pytest.raises(KeyboardInterrupt):
            start_kexec(_kexec_plan(chains=2), store, target=interrupted_at(2))
        exp_id = store.list_experiments()[0].experiment.id
        assert [b.index for b in store.boots(exp_id)] == [1, 2, 3]
        resumed = resume_experiment(exp_id, store, target=FakeTarget())
        boots = store.boots(exp_id)
    assert resumed.experiment.status == "complete" and resumed.boots_run == 9
    assert sorted(b.index for b in boots) == list(range(1, 13)) and not any(b.superseded for b in boots)


def test_kexec_interrupted_chain_is_superseded_on_resume(tmp_path: Path) -> None:
    """A chain whose kernels were flushed by Ctrl-C mid-chain is run again; its kernels stay stored."""
    cancel = threading.Event()
    target = FakeTarget()
    with Store.open(tmp_path / "k.db") as store:
        workload_plan = _kexec_plan(hops=3, chains=1)
        # Ctrl-C once the third kernel of the chain printed its init marker.
        markers = Counter[str]()

        def watch(line: LogLine) -> None:
            if "init uptime" in line.text:
                markers["init"] += 1
                if markers["init"] == 3:
                    cancel.set()

        target.line_hook = watch
        with pytest.raises(KeyboardInterrupt):
            start_kexec(workload_plan, store, cancel=cancel, target=target)
        exp_id = store.list_experiments()[0].experiment.id
        cut = store.boots(exp_id)
        # The first kernel was stored when the second's marker came; Ctrl-C flushed the second.
        assert [b.reason == INTERRUPTED_REASON for b in cut] == [False, True]
        resume_experiment(exp_id, store, target=FakeTarget())
        boots = store.boots(exp_id)
    first_chain = [b for b in boots if b.index <= 4]
    assert [(b.index, b.attempt, b.superseded) for b in first_chain if b.attempt == 0] == [
        (1, 0, True),
        (2, 0, True),
    ]
    again = [b for b in first_chain if b.attempt == 1]
    assert [b.index for b in again] == [1, 2, 3, 4]
    assert all(not b.superseded and b.reason == "" for b in again)
    # The other variant's chain never started before Ctrl-C: it runs once, as attempt 0.
    assert [(b.index, b.attempt) for b in boots if b.index > 4] == [(5, 0), (6, 0), (7, 0), (8, 0)]


def test_a_failed_kexec_load_ends_the_chain_and_counts_as_done(tmp_path: Path) -> None:
    plan = KexecPlan(
        from_spec="from",
        variants=(KexecVariant("bad", "to", append="fake.kexec_fail_hop=2"),),
        hops=3,
        seed=1,
        chains=1,
        accel="tcg",
    )
    with Store.open(tmp_path / "k.db") as store:
        result = start_kexec(plan, store, target=FakeTarget())
        boots = store.boots(result.experiment.id)
        again = resume_experiment(result.experiment.id, store, target=FakeTarget())
    assert [b.outcome for b in boots] == ["ok", "ok", "kexec-error"]
    assert again.boots_run == 0


def test_the_workload_of_a_stored_plan_is_rebuilt_for_resume(tmp_path: Path) -> None:
    workload = BootWorkload(_plan())
    with Store.open(tmp_path / "r.db") as store:
        result = start_experiment(_plan(), store, target=FakeTarget())
        stored = store.experiment(result.experiment.id).plan
    assert stored["workload"] == "boot" and BootWorkload.from_document(stored).plan == workload.plan
    # history and bisect-run read a stored plan directly: the workload's name is no plan field.
    assert plan_from_dict(stored) == workload.plan

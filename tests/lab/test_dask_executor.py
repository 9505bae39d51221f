"""The Dask executor on real Dask clusters with the fake target (no QEMU, seconds): every slot stored
once over two worker processes, a worker killed mid-boot and its slot retried elsewhere, a scheduler
that goes away (run interrupted, --resume continues on a new one), a duplicate result dropped, where
each boot was measured, and one-line errors for bad --executor values."""

from __future__ import annotations

import functools
import threading
from collections import Counter
from pathlib import Path

import pytest
import sqlalchemy as sa
from cli_here import run_in_process
from dask_cluster import Cluster, dying_fake, slow_fake

from bootscope.errors import BootError, InputError
from bootscope.lab.executors.dask import dask_executor, scheduler_address
from bootscope.lab.executors.remote import measure_slot
from bootscope.lab.plans.boot import Plan, VariantSpec
from bootscope.lab.plans.kexec import KexecPlan, KexecVariant
from bootscope.lab.plans.schedule import Slot, build_schedule
from bootscope.lab.progress import SilentReporter
from bootscope.lab.slots import SlotLoop
from bootscope.lab.targets.fake import FakeTarget
from bootscope.lab.workloads.boot import BootWorkload
from bootscope.metrics import KEXEC_DOWNTIME_S
from bootscope.store import BootRecord, Store
from bootscope.usecases.run import resume_experiment, start_experiment, start_kexec

PLACEMENT_KEYS = {"worker", "host", "cpu_model", "cores", "load_1m", "other_cpus"}


def _plan(samples: int = 6, seed: int = 11) -> Plan:
    return Plan(
        variants=(
            VariantSpec("a", "k", append="fake.init_ms=1000"),
            VariantSpec("b", "k", append="fake.init_ms=1500"),
        ),
        seed=seed,
        samples_per_variant=samples,
        warmup_per_variant=0,
    )


def _final(store: Store, exp_id: int) -> list[BootRecord]:
    return [b for b in store.boots(exp_id) if not b.superseded]


def test_scheduler_addresses() -> None:
    assert scheduler_address("dask://lab-1:8786") == "tcp://lab-1:8786"
    assert scheduler_address("dask://10.0.0.5") == "tcp://10.0.0.5:8786"
    assert scheduler_address("tcp://127.0.0.1:40001/") == "tcp://127.0.0.1:40001"
    for bad in ("dask://", "dask://host:port", "dask://host:0", "dask://a/b:1", "dask://h:99999"):
        with pytest.raises(InputError, match="dask://HOST:PORT"):
            scheduler_address(bad)


def test_every_slot_is_stored_once_and_both_workers_measure(two_workers: str, tmp_path: Path) -> None:
    with (
        dask_executor(two_workers, target_factory=FakeTarget) as executor,
        Store.open(tmp_path / "d.db") as store,
    ):
        result = start_experiment(_plan(), store, executor=executor)
        boots = store.boots(result.experiment.id)
        experiment = store.experiment(result.experiment.id)
    assert result.status == "complete" and result.boots_run == 12
    order = build_schedule(["a", "b"], 6, 0, 11)
    assert [(b.index, b.variant) for b in boots] == [(s.index, s.variant) for s in order]
    assert all(b.outcome == "ok" and not b.superseded and b.attempt == 0 for b in boots)
    workers = Counter(b.placement["worker"] for b in boots)
    assert len(workers) == 2 and set(workers) == set(experiment.host["workers"]), workers
    for boot in boots:
        assert set(boot.placement) >= PLACEMENT_KEYS, boot.placement
        assert boot.placement["cores"] and all(isinstance(core, int) for core in boot.placement["cores"])
    assert experiment.host["executor"] == "dask" and experiment.host["scheduler"] == two_workers


def test_kexec_chains_run_on_dask_workers_with_every_kernel_stored(two_workers: str, tmp_path: Path) -> None:
    plan = KexecPlan(
        from_spec="from",
        variants=(KexecVariant("checks", "to", append="fake.init_ms=800"),),
        hops=2,
        seed=5,
        chains=3,
        accel="tcg",
    )
    with (
        dask_executor(two_workers, target_factory=FakeTarget) as executor,
        Store.open(tmp_path / "x.db") as store,
    ):
        result = start_kexec(plan, store, executor=executor)
        boots = store.boots(result.experiment.id)
        downtimes = store.samples(result.experiment.id, KEXEC_DOWNTIME_S)
    # 3 chains, one slot each, of 1 + 2 kernels: every kernel at its fixed index, once.
    assert sorted(b.index for b in boots) == list(range(1, 10))
    assert [b.warmup for b in boots] == [True, False, False] * 3
    assert len(downtimes["checks"]) == 6 and min(downtimes["checks"]) > 0
    # A chain's kernels share one guest, so one worker and one core set.
    for first in (1, 4, 7):
        chain = [b for b in boots if first <= b.index < first + 3]
        assert len({(b.placement["worker"], tuple(b.placement["cores"])) for b in chain}) == 1


def test_a_second_result_for_a_slot_is_not_stored(tmp_path: Path) -> None:
    workload = BootWorkload(_plan(samples=1))
    target = FakeTarget()
    workload.prepare(target, "tcg")
    slot = Slot(1, "a", False, 0)
    measured = measure_slot(workload, target, "tcg", slot, 0, (0,), {"worker": "tcp://w:1"})
    ((record, lines),) = measured.records
    assert record.placement["worker"] == "tcp://w:1" and record.placement["cores"] == [0]
    with Store.open(tmp_path / "dup.db") as store:
        experiment = store.create_experiment(
            plan=workload.document(), seed=11, accel="tcg", accel_reason="", host={},
            variants=workload.variant_records(),
        )  # fmt: skip
        loop = SlotLoop(store, experiment, workload, target, SilentReporter(), threading.Event())
        assert loop.record_measured(slot, measured.records) is True
        assert loop.record_measured(slot, measured.records) is False  # e.g. a task Dask ran twice
        (stored,) = store.boots(experiment.id)
        log = store.boot_log(experiment.id, 1)
    assert loop.boots_run == 1 and stored.index == 1 and stored.placement == record.placement
    assert [line.text for line in log] == [line.text for line in lines]


def test_a_worker_killed_mid_boot_loses_nothing_and_stores_nothing_twice(
    two_workers: str, tmp_path: Path
) -> None:
    # One of the cluster's workers dies (its nanny starts a new one; two_workers waits for it).
    flag = tmp_path / "died"
    factory = functools.partial(dying_fake, str(flag), "fake.init_ms=1500")
    with (
        dask_executor(two_workers, target_factory=factory) as executor,
        Store.open(tmp_path / "k.db") as store,
    ):
        result = start_experiment(_plan(seed=5), store, executor=executor)
        boots = store.boots(result.experiment.id)
    assert flag.exists()  # a worker really died while booting a slot of variant b
    assert result.status == "complete"
    assert sorted(b.index for b in boots) == list(range(1, 13))  # every slot once, none twice
    assert all(b.outcome == "ok" and not b.superseded for b in boots)
    assert Counter(b.variant for b in boots) == {"a": 6, "b": 6}


class _KillSchedulerAfter(SilentReporter):
    """A reporter that kills the scheduler process once ``count`` boots are stored."""

    def __init__(self, cluster: Cluster, count: int) -> None:
        super().__init__()
        self.cluster, self.count, self.done = cluster, count, 0

    def boot_done(self, slot: Slot, record: BootRecord) -> None:
        self.done += 1
        if self.done == self.count and self.cluster.scheduler is not None:
            self.cluster.kill(self.cluster.scheduler)


def test_a_scheduler_that_goes_away_interrupts_the_run_and_resume_continues(tmp_path: Path) -> None:
    cluster = Cluster(tmp_path)
    try:
        address = cluster.start_scheduler()
        cluster.start_worker("w0", cores="0")
        db = tmp_path / "s.db"
        with Store.open(db) as store:
            with (
                dask_executor(address, target_factory=slow_fake) as executor,
                pytest.raises(BootError) as lost,
            ):
                start_experiment(_plan(), store, _KillSchedulerAfter(cluster, 3), executor=executor)
            assert "lost the Dask scheduler" in str(lost.value) and "--resume 1" in str(lost.value)
            assert store.experiment(1).status == "interrupted"
            kept = {b.index: b.id for b in _final(store, 1)}
            assert 3 <= len(kept) < 12
            cluster.start_scheduler()  # same port: the worker joins it again by itself
            # The worker rejoins by itself; give it as long as a loaded host needs to reconnect.
            with dask_executor(address, target_factory=slow_fake, worker_wait_s=180) as executor:
                result = resume_experiment(1, store, executor=executor)
            boots = _final(store, 1)
        assert result.status == "complete" and result.boots_run == 12 - len(kept)
        assert sorted(b.index for b in boots) == list(range(1, 13))
        assert {b.index: b.id for b in boots if b.index in kept} == kept  # the first ones stay as stored
    finally:
        cluster.stop()


def test_store_schema_2_gains_the_placement_column(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    with Store.open(db) as store:
        workload = BootWorkload(_plan(samples=1))
        exp = store.create_experiment(
            plan={}, seed=1, accel="tcg", accel_reason="", host={}, variants=workload.variant_records()
        )
        store.record_boot(exp.id, BootRecord(variant="a", index=1, warmup=False, outcome="ok"), [])
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:
        conn.execute(sa.text("ALTER TABLE boots DROP COLUMN placement"))
        conn.execute(sa.text("UPDATE bootscope_meta SET value = '2' WHERE key = 'schema'"))
    engine.dispose()
    with Store.open(db) as store:
        (old,) = store.boots(1)
        assert old.placement == {}
        store.record_boot(1, BootRecord("a", 2, False, "ok", placement={"worker": "tcp://w:1"}), [])
        assert store.boots(1)[1].placement == {"worker": "tcp://w:1"}


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["run", "/no/such/bzImage", "--executor", "ssh://x"], 2, "give local or dask://HOST:PORT"),
        (
            ["run", "/no/such/bzImage", "--executor", "dask://127.0.0.1:9", "-j", "2"],
            2,
            "-j applies to local",
        ),
        (
            ["run", "/no/such/bzImage", "--executor", "dask://127.0.0.1:9"],
            3,
            "cannot reach the Dask scheduler",
        ),
        (["worker", "dask://127.0.0.1:9", "--cores", "a,b"], 2, "--cores takes CPU ids"),
        (["worker", "dask://:9"], 2, "dask://HOST:PORT"),
    ],
)
def test_bad_executor_options_are_one_line_errors(
    args: list[str], code: int, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_in_process(*args, *(["--db", str(tmp_path / "e.db")] if args[0] == "run" else [])) == code
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err, err

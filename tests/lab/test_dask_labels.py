"""Host kernels as variants (seed 001): Dask workers started with ``bootscope worker --label
host_kernel=...`` and variants pinned with ``on=host_kernel=...``, on a real scheduler and real
``bootscope worker`` processes on loopback (the fake target boots: what is under test is where each
boot runs). Every stored boot says where it ran, and the comparison of the two variants names the
host facts that differ."""

from __future__ import annotations

import platform
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_here import run_in_process
from dask_cluster import Cluster

from bootscope.errors import InputError
from bootscope.lab.executors.dask import dask_executor
from bootscope.lab.plans.boot import Plan, VariantSpec, parse_variant, plan_from_dict
from bootscope.lab.targets.fake import FakeTarget
from bootscope.store import Store
from bootscope.usecases.run import start_experiment

OLD, NEW = ("host_kernel", "6.1"), ("host_kernel", "6.12")


def _plan(old: tuple[str, str] = OLD, new: tuple[str, str] = NEW) -> Plan:
    return Plan(
        variants=(
            VariantSpec("old", "k", append="fake.init_ms=1000", on=(old,)),
            VariantSpec("new", "k", append="fake.init_ms=1500", on=(new,)),
        ),
        seed=7,
        samples_per_variant=4,
        warmup_per_variant=0,
    )


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, str]]]:
    """A scheduler and two workers, one per core, labelled host_kernel=6.1 and host_kernel=6.12;
    yields the scheduler's address and each label's worker address."""
    cluster = Cluster(tmp_path_factory.mktemp("labels"))
    try:
        address = cluster.start_scheduler()
        workers = {
            "6.1": cluster.start_worker("w-old", cores="0", labels=("host_kernel=6.1",)),
            "6.12": cluster.start_worker("w-new", cores="1", labels=("host_kernel=6.12", "rack=b")),
        }
        yield address, workers
    finally:
        cluster.stop()


def test_each_variant_boots_only_on_the_workers_with_its_label(
    labelled: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    address, workers = labelled
    with (
        dask_executor(address, target_factory=FakeTarget) as executor,
        Store.open(tmp_path / "l.db") as store,
    ):
        result = start_experiment(_plan(), store, executor=executor)
        boots = [b for b in store.boots(result.experiment.id) if not b.superseded]
    assert result.status == "complete" and len(boots) == 8
    for boot in boots:
        kernel = OLD[1] if boot.variant == "old" else NEW[1]
        assert boot.placement["worker"] == workers[kernel], (boot.variant, boot.placement)
        assert boot.placement["labels"]["host_kernel"] == kernel
        assert boot.placement["host_kernel"] == platform.release()  # the host's own, recorded per boot
    assert any("runs on the workers labelled host_kernel=6.12" in note for note in result.notes)


def test_a_label_no_worker_carries_is_refused_before_anything_is_stored(
    labelled: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    address, _ = labelled
    db = tmp_path / "none.db"
    with dask_executor(address, target_factory=FakeTarget) as executor, Store.open(db) as store:
        with pytest.raises(InputError, match=r"on=host_kernel=9\.9 but no worker .* host_kernel=6\.1"):
            start_experiment(_plan(new=("host_kernel", "9.9")), store, executor=executor)
        assert store.list_experiments() == []


def test_labels_in_the_variant_syntax_and_the_stored_plan(tmp_path: Path) -> None:
    base = VariantSpec("base", "k")
    spec = parse_variant("new:on=host_kernel=6.12,on=rack=b,append=quiet", base)
    assert spec.on == (("host_kernel", "6.12"), ("rack", "b")) and spec.append == "quiet"
    assert plan_from_dict(_plan().to_dict()).variants[1].on == (NEW,)
    for bad in ("x:on=host_kernel", "x:on==6.1", "x:on=a b=c"):
        with pytest.raises(InputError, match="KEY=VALUE"):
            parse_variant(bad, base)
    with Store.open(tmp_path / "local.db") as store, pytest.raises(InputError, match="--executor dask://"):
        start_experiment(_plan(), store)


def test_a_bad_worker_label_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code = run_in_process("worker", "dask://127.0.0.1:1", "--label", "no equals sign")
    err = capsys.readouterr().err.strip()
    assert code == 2 and "--label" in err and "KEY=VALUE" in err and len(err.splitlines()) == 1


def test_the_comparison_names_the_host_facts_that_differ(
    labelled: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    from bootscope.analyze.like_for_like import BootFacts, like_for_like
    from bootscope.usecases.summary import summarize_run

    address, _ = labelled
    db = tmp_path / "facts.db"
    with dask_executor(address, target_factory=FakeTarget) as executor, Store.open(db) as store:
        result = start_experiment(_plan(), store, executor=executor)
        summary = summarize_run(store, result.experiment.id)
    # Both workers run on this one host: besides the label, nothing about the host differs.
    assert summary.like_for_like["new"].ok, summary.like_for_like["new"]
    old = [BootFacts(host="a", host_kernel="6.1.0-44-amd64", host_cpu="EPYC 7262")] * 3
    new = [BootFacts(host="b", host_kernel="6.12.48+deb12-amd64", host_cpu="EPYC 7262")] * 3
    assert [d.field for d in like_for_like(old, new).differences] == ["host", "host kernel"]

"""The kexec runner's storage from real chain captures (tests/data/kexec-chain-*.tsv), no boot:
each kernel stored while the chain runs, what Ctrl-C keeps, and compare/report on a stored kexec run."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path

import pytest
from captures import load_chain_capture

from bootscope.analyze.kexec import chain_hops
from bootscope.errors import InputError
from bootscope.lab.plans.kexec import KexecVariant, build_variants, ignored_options, parse_variant
from bootscope.lab.qemu.kexec_chain import KexecOptions
from bootscope.lab.workloads.kexec import INTERRUPTED_REASON, ChainRecorder
from bootscope.metrics import KEXEC_METRICS
from bootscope.model import Boot, LogLine
from bootscope.store import BootRecord, Store, VariantRecord
from bootscope.usecases.summary import summarize_run
from bootscope.usecases.views import run_view


def _experiment(store: Store, *names: str) -> int:
    return store.create_experiment(
        plan={"command": "kexec"},
        seed=1,
        accel="tcg",
        accel_reason="test",
        host={},
        variants=[VariantRecord(name, KexecVariant(name, "k").config()) for name in names],
    ).id


def _recorder(store: Store, exp_id: int, variant: str, boot: Boot, first_index: int = 1) -> ChainRecorder:
    def emit(record: BootRecord, lines: Sequence[LogLine]) -> BootRecord:
        return replace(record, id=store.record_boot(exp_id, record, lines))

    recorder = ChainRecorder(emit, variant, first_index=first_index, releases=("6.1", "6.1"), accel="tcg")
    recorder.start(boot.host_start_ns)
    return recorder


def _metrics(hop_metrics: object) -> dict[str, float]:
    return {k: v for k, v in asdict(hop_metrics).items() if v is not None}  # type: ignore[call-overload]


@pytest.mark.parametrize("name", ["kexec-chain-2hops-nochecks.tsv", "kexec-chain-2hops-fileload.tsv"])
def test_each_kernel_is_stored_when_the_next_init_marker_arrives(
    data_dir: Path, tmp_path: Path, name: str
) -> None:
    boot = load_chain_capture(data_dir / name)
    whole = chain_hops(boot, hops_planned=2)
    init_rows = [i for i, line in enumerate(boot.lines) if "BOOTSCOPE-MARKER init " in line.text]
    assert len(init_rows) == 3
    with Store.open(tmp_path / "k.db") as store:
        exp_id = _experiment(store, "a")
        recorder = _recorder(store, exp_id, "a", boot)
        stored_after_line = []
        for line in boot.lines:
            recorder.on_line(line)
            stored_after_line.append(len(store.boots(exp_id)))
        # nothing before kernel 1's init marker; kernel k-1 the moment kernel k's marker arrives
        assert stored_after_line[init_rows[1] - 1] == 0 and stored_after_line[init_rows[1]] == 1
        assert stored_after_line[init_rows[2] - 1] == 1 and stored_after_line[init_rows[2]] == 2
        recorder.finish(boot, hops_planned=2)
        records = store.boots(exp_id)
        logs = store.logs(exp_id)
    assert [(r.index, r.warmup, r.outcome) for r in records] == [
        (1, True, "ok"),
        (2, False, "ok"),
        (3, False, "ok"),
    ]
    for record, hop in zip(records, whole, strict=True):
        # stored while the chain ran, from a window of the last kernels: the same as the whole split
        assert dict(record.metrics) == pytest.approx(_metrics(hop.metrics))
        assert record.host_start_ns == hop.start_host_ns
        assert record.id is not None
        assert [line.text for line in logs[record.id]] == [line.text for line in hop.raw_lines]
    assert all(records[k].metrics["kexec_downtime_s"] > 0 for k in (1, 2))
    # every captured line stored once, as captured (a re-parse of a stored kernel gives its lines)
    stored = [(line.host_ns, line.text) for record in records if record.id for line in logs[record.id]]
    assert stored == [(line.host_ns, line.text) for line in boot.lines]


def test_interrupt_keeps_every_kernel_whose_init_marker_arrived(data_dir: Path, tmp_path: Path) -> None:
    boot = load_chain_capture(data_dir / "kexec-chain-2hops-nochecks.tsv")
    whole = chain_hops(boot, hops_planned=2)
    init_rows = [i for i, line in enumerate(boot.lines) if "BOOTSCOPE-MARKER init " in line.text]
    cut = init_rows[1] + 2  # Ctrl-C just after kernel 1 printed its marker
    with Store.open(tmp_path / "k.db") as store:
        exp_id = _experiment(store, "a")
        recorder = _recorder(store, exp_id, "a", boot)
        for line in boot.lines[:cut]:
            recorder.on_line(line)
        recorder.flush()
        recorder.flush()  # idempotent: nothing is stored twice
        records = store.boots(exp_id)
        last_log = store.boot_log(exp_id, 2)
    assert [(r.warmup, r.outcome) for r in records] == [(True, "ok"), (False, "ok")]
    assert records[1].reason == INTERRUPTED_REASON
    for metric in KEXEC_METRICS:
        assert records[1].metrics[metric] == pytest.approx(getattr(whole[1].metrics, metric))
    assert (last_log[-1].host_ns, last_log[-1].text) == (
        boot.lines[cut - 1].host_ns,
        boot.lines[cut - 1].text,
    )


def test_a_failed_load_is_stored_as_a_failed_sample(data_dir: Path, tmp_path: Path) -> None:
    boot = load_chain_capture(data_dir / "kexec-chain-bad-target.tsv")
    with Store.open(tmp_path / "k.db") as store:
        exp_id = _experiment(store, "a")
        recorder = _recorder(store, exp_id, "a", boot)
        for line in boot.lines:
            recorder.on_line(line)
        recorder.finish(boot, hops_planned=2)
        records = store.boots(exp_id)
    assert [(r.warmup, r.outcome) for r in records] == [(True, "ok"), (False, "kexec-error")]
    assert "Cannot determine the file type" in records[1].reason


@pytest.fixture
def kexec_run(data_dir: Path, tmp_path: Path) -> tuple[Path, int]:
    """A stored kexec run of two variants from two real captures: kexec -l -i against kexec -l -s."""
    db = tmp_path / "run.db"
    with Store.open(db) as store:
        exp_id = _experiment(store, "nochecks", "fileload")
        index = 1
        for variant, name in (("nochecks", "nochecks"), ("fileload", "fileload")):
            boot = load_chain_capture(data_dir / f"kexec-chain-2hops-{name}.tsv")
            recorder = _recorder(store, exp_id, variant, boot, first_index=index)
            for line in boot.lines:
                recorder.on_line(line)
            recorder.finish(boot, hops_planned=2)
            index = recorder.next_index
        store.set_status(exp_id, "complete")
    return db, exp_id


def _bootscope(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bootscope", *args], capture_output=True, text=True, timeout=300, check=False
    )


def test_compare_on_a_stored_kexec_run(kexec_run: tuple[Path, int]) -> None:
    db, exp_id = kexec_run
    with Store.open(db) as store:
        downtimes = store.samples(exp_id, "kexec_downtime_s")
        comparisons = [c for group in summarize_run(store, exp_id).comparisons for c in group]
    assert {name: len(v) for name, v in downtimes.items()} == {"nochecks": 2, "fileload": 2}
    done = _bootscope(
        "compare", str(exp_id), "--metric", "kexec_downtime_s", "--db", str(db), "--format", "csv"
    )
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert [(row["metric"], row["a"], row["b"], row["n_a"], row["n_b"]) for row in rows] == [
        ("kexec_downtime_s", "nochecks", "fileload", "2", "2")
    ]
    # Hodges-Lehmann shift of 2 against 2: the median of the 4 pairwise differences, by hand
    a, b = downtimes["nochecks"], downtimes["fileload"]
    pairs = sorted(y - x for x in a for y in b)
    assert float(rows[0]["shift"]) == pytest.approx((pairs[1] + pairs[2]) / 2)
    ours = next(c for c in comparisons if c.metric == "kexec_downtime_s")
    assert ours.shift_estimate == pytest.approx(float(rows[0]["shift"]))


def test_report_on_a_stored_kexec_run(kexec_run: tuple[Path, int], tmp_path: Path) -> None:
    db, exp_id = kexec_run
    out = tmp_path / "report.html"
    done = _bootscope("report", "--run", str(exp_id), "--db", str(db), "-o", str(out))
    assert done.returncode == 0, done.stderr
    with Store.open(db) as store:
        view = run_view(store, str(exp_id), 0.05)
    assert set(KEXEC_METRICS) <= set(view.metrics)
    downtime = next(s for s in view.summaries["kexec_downtime_s"] if s.name == "fileload")
    assert downtime.n == 2
    assert view.example is not None and "Run /init" in " ".join(line.text for line in view.example.lines)
    html = out.read_text(encoding="utf-8")
    assert "kexec_downtime_s" in html and "kexec_blind_s" in html
    assert "fileload" in html and "nochecks" in html


BASE = KexecVariant(name="default", to="debian:cloud")


def test_parse_variant_sets_each_option() -> None:
    variant = parse_variant("fast:no-checks=1,file-load=yes,mem=2048,smp=2,to=/k,append=quiet", BASE)
    assert variant == KexecVariant(
        "fast", "/k", KexecOptions(file_load=True, no_checks=True), 2048, 2, "quiet"
    )
    assert parse_variant("plain:", BASE) == KexecVariant("plain", "debian:cloud")


@pytest.mark.parametrize("text", [":no-checks=1", "x:colour=red", "x:mem=0", "x:no-checks=maybe", "x:mem"])
def test_parse_variant_rejects_bad_specs(text: str) -> None:
    with pytest.raises(InputError):
        parse_variant(text, BASE)


def test_mem_list_becomes_variants_and_duplicates_are_refused() -> None:
    names = [(v.name, v.mem_mb) for v in build_variants(BASE, [], [1024, 2048])]
    assert names == [("mem1024", 1024), ("mem2048", 2048)]
    with pytest.raises(InputError):
        build_variants(BASE, ["a:", "a:no-checks=1"], [1024])
    with pytest.raises(InputError):
        build_variants(BASE, ["a:"], [1024, 2048])


def test_no_checks_is_reported_as_ignored_only_with_fileload_chain_capture() -> None:
    assert ignored_options(parse_variant("s:file-load=1,no-checks=1", BASE))
    assert not ignored_options(parse_variant("l:no-checks=1", BASE))
    assert not ignored_options(parse_variant("s:file-load=1", BASE))

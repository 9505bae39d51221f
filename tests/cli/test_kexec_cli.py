"""`bootscope kexec`: variant parsing, and real chains under QEMU checked against the stored logs."""

from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import pytest

from bootscope.cli.kexec_cmd import KexecVariant, build_variants, parse_variant
from bootscope.errors import InputError
from bootscope.sources.kexec import KexecOptions
from bootscope.store import Store

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


def _bootscope(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bootscope", *args], capture_output=True, text=True, timeout=900, check=False
    )


def _marker_ns(lines: list[object], name: str) -> int:
    hits = [line.host_ns for line in lines if f"BOOTSCOPE-MARKER {name} " in line.text]  # type: ignore[attr-defined]
    assert len(hits) == 1, (name, hits)
    assert isinstance(hits[0], int)
    return hits[0]


@pytest.mark.boot
def test_three_kexec_reboots_with_and_without_checks(cloud_kernel: Path, tmp_path: Path) -> None:
    db = tmp_path / "kexec.db"
    done = _bootscope(
        "kexec", str(cloud_kernel), "-n", "3", "--variant", "checks:", "--variant", "nochecks:no-checks=1",
        "--db", str(db), "--seed", "7",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "not hardware timings" in done.stdout
    assert "kexec_downtime_s" in done.stdout and "nochecks" in done.stdout
    with Store.open(db) as store:
        exp = store.experiment("latest")
        boots = sorted(store.boots(exp.id), key=lambda record: record.index)
        logs = store.logs(exp.id)
        assert len(boots) == 8  # per variant: the boot QEMU started (warm-up) and 3 kexec reboots
        for variant in ("checks", "nochecks"):
            mine = [record for record in boots if record.variant == variant]
            assert [record.warmup for record in mine] == [True, False, False, False]
            assert all(record.outcome == "ok" for record in mine)
            for previous, record in itertools.pairwise(mine):
                assert record.id is not None and previous.id is not None
                # downtime: the old kernel's kexec-exec marker -> the new kernel's init marker, both
                # read from the stored logs of the two boots
                exec_ns = _marker_ns(logs[previous.id], "kexec-exec")
                init_ns = _marker_ns(logs[record.id], "init")
                assert record.metrics["kexec_downtime_s"] == pytest.approx(
                    (init_ns - exec_ns) / 1e9, abs=1e-6
                )
                assert record.host_start_ns == exec_ns
                assert 0 < record.metrics["kexec_blind_s"] < record.metrics["kexec_downtime_s"]  # type: ignore[operator]
                assert record.metrics["kexec_load_s"] > 0  # type: ignore[operator]
                assert record.metrics["kernel_init_s"] > 0  # type: ignore[operator]
        samples = store.samples(exp.id, "kexec_downtime_s")
        assert {name: len(values) for name, values in samples.items()} == {"checks": 3, "nochecks": 3}


@pytest.mark.boot
def test_failed_load_is_stored_with_the_guest_error(cloud_kernel: Path, tmp_path: Path) -> None:
    bad = tmp_path / "not-a-kernel"
    bad.write_text("this is text, not a bzImage\n")
    db = tmp_path / "fail.db"
    done = _bootscope("kexec", str(cloud_kernel), "--to", str(bad), "-n", "2", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert "kexec-error" in done.stdout
    with Store.open(db) as store:
        exp = store.experiment("latest")
        boots = sorted(store.boots(exp.id), key=lambda record: record.index)
        assert [(record.warmup, record.outcome) for record in boots] == [(True, "ok"), (False, "kexec-error")]
        assert "Cannot determine the file type" in boots[1].reason
        assert any("BOOTSCOPE-KEXEC-ERROR" in line.text for line in store.logs(exp.id)[boots[1].id])

"""`bootscope kexec`: real chains under QEMU, checked against the stored logs (variant parsing and
storage without a boot: tests/lab/test_kexec_runner.py)."""

from __future__ import annotations

import contextlib
import itertools
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bootscope.errors import StoreError
from bootscope.store import BootRecord, Store


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
        "--accel", "tcg", "--db", str(db), "--seed", "7", "-j", "2",
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
    done = _bootscope(
        "kexec", str(cloud_kernel), "--to", str(bad), "-n", "2", "--accel", "tcg", "--db", str(db)
    )  # fmt: skip
    assert done.returncode == 3, done.stderr  # a failed sample, after printing and storing it
    assert "1 of 2 kernels" in done.stderr
    assert "kexec-error" in done.stdout
    with Store.open(db) as store:
        exp = store.experiment("latest")
        boots = sorted(store.boots(exp.id), key=lambda record: record.index)
        assert [(record.warmup, record.outcome) for record in boots] == [(True, "ok"), (False, "kexec-error")]
        assert "Cannot determine the file type" in boots[1].reason
        assert any("BOOTSCOPE-KEXEC-ERROR" in line.text for line in store.logs(exp.id)[boots[1].id])


def _check_reboots(store: Store, exp_id: int, variant: str) -> list[BootRecord]:
    """Check each stored reboot's downtime against the marker stamps in the stored logs; return them."""
    boots = [b for b in sorted(store.boots(exp_id), key=lambda r: r.index) if b.variant == variant]
    logs = store.logs(exp_id)
    for previous, record in itertools.pairwise(boots):
        assert record.id is not None and previous.id is not None
        exec_ns = _marker_ns(logs[previous.id], "kexec-exec")
        init_ns = _marker_ns(logs[record.id], "init")
        assert record.metrics["kexec_downtime_s"] == pytest.approx((init_ns - exec_ns) / 1e9, abs=1e-6)
    return boots


@pytest.mark.boot
def test_file_load_chain_says_that_no_checks_is_ignored(cloud_kernel: Path, tmp_path: Path) -> None:
    db = tmp_path / "file.db"
    done = _bootscope(
        "kexec",
        str(cloud_kernel),
        "-n",
        "2",
        "--file-load",
        "--no-checks",
        "--accel",
        "tcg",
        "--db",
        str(db),
        "--seed",
        "1",
    )
    assert done.returncode == 0, done.stderr
    assert "ignores -i/--no-checks" in " ".join(done.stdout.split())
    with Store.open(db) as store:
        exp = store.experiment("latest")
        boots = _check_reboots(store, exp.id, "default")
        assert [(b.warmup, b.outcome) for b in boots] == [(True, "ok"), (False, "ok"), (False, "ok")]
        logs = store.logs(exp.id)
        assert boots[0].id is not None
        assert any("bootscope.kexec_load=s" in line.text for line in logs[boots[0].id])
        assert exp.plan["variants"][0]["file_load"] is True
        assert any("ignores -i" in note for note in exp.plan["notes"])


@pytest.mark.boot
def test_ctrl_c_mid_chain_keeps_the_completed_reboots(cloud_kernel: Path, tmp_path: Path) -> None:
    db = tmp_path / "int.db"
    argv = [
        sys.executable, "-m", "bootscope", "kexec", str(cloud_kernel), "-n", "3", "--accel", "tcg",
        "--db", str(db),
    ]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240
        stored = 0
        while stored == 0 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
            if db.exists():
                with Store.open(db) as store, contextlib.suppress(StoreError):
                    stored = len(store.boots(store.experiment("latest").id))
        assert stored >= 1 and proc.poll() is None, "the first kernel was not stored while the chain ran"
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    with Store.open(db) as store:
        exp = store.experiment("latest")
        assert exp.status == "interrupted"
        boots = _check_reboots(store, exp.id, "default")
    # the boot QEMU started was stored when kernel 1's init marker came; kernel 1 on Ctrl-C at the latest
    assert 2 <= len(boots) < 4
    assert [(b.warmup, b.outcome) for b in boots[:2]] == [(True, "ok"), (False, "ok")]
    assert all(b.outcome == "ok" for b in boots)


@pytest.mark.boot
def test_kexec_killed_with_sigkill_is_completed_by_resume(cloud_kernel: Path, tmp_path: Path) -> None:
    db = tmp_path / "kill.db"
    argv = [
        sys.executable, "-m", "bootscope", "kexec", str(cloud_kernel), "-n", "2", "--chains", "4", "-j", "2",
        "--accel", "tcg", "--seed", "3", "--db", str(db),
    ]  # fmt: skip
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300
        stored = 0
        while stored < 4 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
            if db.exists():
                with contextlib.suppress(StoreError), Store.open(db) as store:
                    stored = len(store.boots(store.experiment("latest").id))
        assert stored >= 4 and proc.poll() is None, "kernels were not stored while the chains ran"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    with Store.open(db) as store:
        exp = store.experiment("latest")
        before = {(b.index, b.attempt): b for b in store.boots(exp.id)}
    assert exp.status != "complete" and len(before) >= 4
    done = _bootscope("kexec", "--resume", "latest", "--db", str(db))
    assert done.returncode == 0, done.stderr
    with Store.open(db) as store:
        exp = store.experiment("latest")
        boots = store.boots(exp.id)
    assert exp.status == "complete"
    # Every kernel stored before the kill is still there, as it was (a cut chain's are superseded).
    after = {(b.index, b.attempt): b for b in boots}
    for key, record in before.items():
        assert after[key].metrics == record.metrics and after[key].variant == record.variant
    final = sorted((b for b in boots if not b.superseded), key=lambda b: b.index)
    assert [b.index for b in final] == list(range(1, 13))  # 4 chains x (the first kernel + 2 reboots)
    assert [b.warmup for b in final] == [True, False, False] * 4
    assert all(b.outcome == "ok" for b in final)
    reboots = [b for b in final if not b.warmup]
    assert all(b.metrics["kexec_downtime_s"] > 0 for b in reboots)

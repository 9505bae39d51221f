"""Accelerator choice: as asked, or KVM only when a probe boot reaches the marker."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import bootscope.lab.qemu.accel as accel
from bootscope.errors import BootError, InputError
from bootscope.lab.qemu import probe_memory
from bootscope.lab.qemu.initramfs import BUSYBOX, InitramfsSpec, build_initramfs
from bootscope.lab.qemu.process import BootConfig
from bootscope.model import Boot, LogLine, Outcome


def test_tcg_and_unknown(tmp_path: Path) -> None:
    assert accel.choose_accel("tcg", tmp_path / "k", None).accel == "tcg"
    with pytest.raises(InputError, match="auto, kvm or tcg"):
        accel.choose_accel("hvf", tmp_path / "k", None)


def test_missing_kvm_device(tmp_path: Path) -> None:
    missing = tmp_path / "kvm"
    with pytest.raises(BootError, match="does not exist"):
        accel.choose_accel("kvm", tmp_path / "k", None, device=missing)
    choice = accel.choose_accel("auto", tmp_path / "k", None, device=missing)
    assert choice.accel == "tcg" and "does not exist" in choice.reason
    assert accel.kvm_usable(missing) is not None


@pytest.mark.boot
@pytest.mark.skipif(shutil.which("qemu-system-x86_64") is None, reason="QEMU not installed")
def test_auto_probes_once_per_kernel(
    cloud_kernel: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    if accel.kvm_usable() is not None or not BUSYBOX.is_file():
        pytest.skip("needs /dev/kvm and busybox")
    initrd = build_initramfs(InitramfsSpec())
    accel._probe_cache.clear()
    choice = accel.choose_accel("auto", cloud_kernel, initrd, probe_timeout_s=10, memory=tmp_path)
    assert choice.accel in ("kvm", "tcg")
    if choice.accel == "tcg":  # this project's build host: KVM hangs after decompression
        assert "using TCG" in choice.reason and "probe" in choice.reason
    else:
        assert "reached the marker" in choice.reason

    def no_boot(*args: object, **kwargs: object) -> None:
        raise AssertionError("the probe result should have come from the cache")

    monkeypatch.setattr(accel, "boot_once", no_boot)
    assert accel.choose_accel("auto", cloud_kernel, initrd, probe_timeout_s=10, memory=tmp_path) == choice


def _fake_probe(monkeypatch: pytest.MonkeyPatch, outcome: Outcome) -> list[BootConfig]:
    """Make every probe boot end with ``outcome`` at once (SeaBIOS output only, as a hung KVM guest
    prints); return the list of the probes' configs."""
    probes: list[BootConfig] = []

    def boot_once(config: BootConfig) -> Boot:
        probes.append(config)
        lines = (LogLine("SeaBIOS (version 1.16.2-debian-1.16.2-1)", host_ns=1),)
        return Boot(lines, outcome, reason="no marker", host_start_ns=0, host_end_ns=2_000_000_000)

    monkeypatch.setattr(accel, "boot_once", boot_once)
    accel._probe_cache.clear()
    return probes


def test_the_probe_answer_is_remembered_across_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    device, kernel, memory = tmp_path / "kvm", tmp_path / "vmlinuz", tmp_path / "memory"
    device.write_bytes(b"")  # opens read-write: KVM looks usable
    kernel.write_bytes(b"kernel")
    probes = _fake_probe(monkeypatch, Outcome.TIMEOUT)
    first = accel.choose_accel("auto", kernel, None, probe_timeout_s=20, device=device, memory=memory)
    assert first.accel == "tcg" and "hung" in first.reason and len(probes) == 1
    accel._probe_cache.clear()  # a new process: only the file under memory/ is left
    again = accel.choose_accel("auto", kernel, None, device=device, memory=memory)
    assert again.accel == "tcg" and len(probes) == 1
    assert (
        again.reason.startswith("KVM probe: remembered from ")
        and " UTC: the KVM probe boot hung" in again.reason
    )
    assert again.reason.endswith("; --reprobe to probe again")
    redone = accel.choose_accel("auto", kernel, None, device=device, memory=memory, reprobe=True)
    assert len(probes) == 2 and not redone.reason.startswith("KVM probe: remembered")
    # another kernel image (same path, new size) is another key: probed again
    accel._probe_cache.clear()
    kernel.write_bytes(b"a newer kernel")
    accel.choose_accel("auto", kernel, None, device=device, memory=memory)
    assert len(probes) == 3


def test_a_passing_failure_is_not_remembered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    device, kernel, memory = tmp_path / "kvm", tmp_path / "vmlinuz", tmp_path / "memory"
    device.write_bytes(b"")
    kernel.write_bytes(b"kernel")
    probes = _fake_probe(monkeypatch, Outcome.QEMU_ERROR)
    accel.choose_accel("auto", kernel, None, device=device, memory=memory)
    accel._probe_cache.clear()
    accel.choose_accel("auto", kernel, None, device=device, memory=memory)
    assert len(probes) == 2


def test_the_key_names_host_kernel_and_qemu(tmp_path: Path) -> None:
    kernel = tmp_path / "vmlinuz"
    kernel.write_bytes(b"kernel")
    key = probe_memory.probe_key(kernel, None, qemu_binary=str(tmp_path / "no-qemu"))
    assert key["host"] and key["cpu_model"] and key["qemu"] == "unknown"
    assert key["kernel"].startswith(f"{kernel.resolve()}:6:")
    assert probe_memory.recall(key, tmp_path / "empty") is None

"""Accelerator choice: as asked, or KVM only when a probe boot reaches the marker."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import bootscope.sources.accel as accel
from bootscope.errors import BootError, InputError
from bootscope.sources.initramfs import BUSYBOX, InitramfsSpec, build_initramfs


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
def test_auto_probes_once_per_kernel(cloud_kernel: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if accel.kvm_usable() is not None or not BUSYBOX.is_file():
        pytest.skip("needs /dev/kvm and busybox")
    initrd = build_initramfs(InitramfsSpec())
    accel._probe_cache.clear()
    choice = accel.choose_accel("auto", cloud_kernel, initrd, probe_timeout_s=10)
    assert choice.accel in ("kvm", "tcg")
    if choice.accel == "tcg":  # this project's build host: KVM hangs after decompression
        assert "using TCG" in choice.reason and "probe" in choice.reason
    else:
        assert "reached the marker" in choice.reason

    def no_boot(*args: object, **kwargs: object) -> None:
        raise AssertionError("the probe result should have come from the cache")

    monkeypatch.setattr(accel, "boot_once", no_boot)
    assert accel.choose_accel("auto", cloud_kernel, initrd, probe_timeout_s=10) == choice

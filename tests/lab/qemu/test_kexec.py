"""The kexec chain's initramfs, /init and command line (no boot here: tests/cli/test_kexec_cli.py boots)."""

from __future__ import annotations

import gzip
import shutil
import subprocess
from pathlib import Path

import pytest

from bootscope.errors import BootError, InputError
from bootscope.lab.qemu import kexec_chain as chain
from bootscope.lab.qemu.initramfs import read_newc


def test_chain_append_counts_hops_and_picks_the_syscall() -> None:
    words = chain.chain_append(
        3, chain.KexecOptions(file_load=True, no_checks=True), "quiet  loglevel=4"
    ).split()
    assert words[:2] == ["quiet", "loglevel=4"]
    assert {
        "bootscope.hop=0",
        "bootscope.hops=3",
        "bootscope.kexec_load=s",
        "bootscope.kexec_checks=0",
    } <= set(words)
    default = chain.chain_append(1, chain.KexecOptions()).split()
    assert "bootscope.kexec_load=l" in default and "bootscope.kexec_checks=1" in default


@pytest.mark.parametrize("hops, append", [(-1, ""), (2, "bootscope.hops=9")])
def test_chain_append_rejects_bad_input(hops: int, append: str) -> None:
    with pytest.raises(InputError):
        chain.chain_append(hops, chain.KexecOptions(), append)


def test_init_script_is_valid_busybox_sh_and_names_its_paths() -> None:
    busybox = shutil.which("busybox")
    if busybox is None:
        pytest.skip("busybox not installed")
    script = chain.chain_init_script("/usr/sbin/kexec")
    assert "@" not in script.replace("$@", "")  # every placeholder was filled
    assert "KEXEC=/usr/sbin/kexec" in script and f"TARGET={chain.TARGET_GUEST_PATH}" in script
    done = subprocess.run([busybox, "sh", "-n", "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_initramfs_holds_init_kexec_its_libraries_and_the_target(tmp_path: Path) -> None:
    kexec = chain.find_kexec()
    target = tmp_path / "target"
    target.write_bytes(b"not really a kernel\n")
    initrd = chain.build_chain_initramfs(target, cache_root=tmp_path / "cache")
    entries = {name: data for name, _mode, data in read_newc(gzip.decompress(initrd.read_bytes()))}
    assert entries["init"].decode() == chain.chain_init_script(str(kexec))
    assert entries[chain.TARGET_GUEST_PATH.lstrip("/")] == target.read_bytes()
    assert entries[str(kexec).lstrip("/")] == kexec.read_bytes()
    assert any("ld-linux" in name for name in entries)  # the loader that runs kexec in the guest
    assert "bin/busybox" in entries

    raw = chain.write_initramfs(initrd, tmp_path / "out.cpio")
    assert read_newc(raw.read_bytes())[0][0]  # uncompressed newc for .cpio
    packed = chain.write_initramfs(initrd, tmp_path / "out.cpio.gz")
    assert packed.read_bytes() == initrd.read_bytes()


def test_missing_files_are_reported(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="TO kernel"):
        chain.chain_initramfs_spec(tmp_path / "absent", Path("/usr/sbin/kexec"))
    with pytest.raises(BootError, match="kexec-tools"):
        chain.find_kexec(tmp_path / "no-kexec")


def test_boot_config_sizes_the_timeout_by_hops(tmp_path: Path) -> None:
    config = chain.ChainConfig(from_kernel=tmp_path / "k", initrd=tmp_path / "i", hops=4)
    qemu = chain.boot_config(config)
    assert qemu.timeout_s == chain.TIMEOUT_PER_HOP_S * 5
    assert qemu.mem_mb == chain.DEFAULT_KEXEC_MEM_MB and not qemu.stop_on_marker
    assert "bootscope.hops=4" in qemu.append

"""The guest initramfs: a newc archive that both our reader and the host's cpio understand."""

from __future__ import annotations

import gzip
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from bootscope.errors import BootError, InputError
from bootscope.lab.qemu.initramfs import BUSYBOX, InitramfsSpec, NewcWriter, build_initramfs, read_newc

needs_busybox = pytest.mark.skipif(not BUSYBOX.is_file(), reason="busybox-static not installed")


def _entries(path: Path) -> dict[str, tuple[int, bytes]]:
    return {name: (mode, data) for name, mode, data in read_newc(gzip.decompress(path.read_bytes()))}


@needs_busybox
def test_default_initramfs_holds_busybox_init_and_console(tmp_path: Path) -> None:
    path = build_initramfs(InitramfsSpec(commands_before_marker=("echo hello",)), cache_root=tmp_path)
    entries = _entries(path)
    mode, data = entries["bin/busybox"]
    assert data == BUSYBOX.read_bytes() and stat.S_ISREG(mode) and mode & 0o111
    init_mode, init = entries["init"]
    text = init.decode()
    assert text.startswith("#!/bin/sh") and init_mode & 0o111
    assert (
        text.index("mount -t proc") < text.index("echo hello") < text.index("BOOTSCOPE-MARKER init uptime=")
    )
    assert text.rstrip().endswith("poweroff -f")
    assert stat.S_ISCHR(entries["dev/console"][0])
    assert stat.S_ISLNK(entries["bin/sh"][0]) and entries["bin/sh"][1] == b"/bin/busybox"
    assert stat.S_ISDIR(entries["proc"][0])


@needs_busybox
@pytest.mark.skipif(shutil.which("cpio") is None, reason="host cpio absent")
def test_host_cpio_reads_the_same_archive(tmp_path: Path) -> None:
    path = build_initramfs(InitramfsSpec(), cache_root=tmp_path)
    raw = gzip.decompress(path.read_bytes())
    listing = subprocess.run(["cpio", "-itv", "--quiet"], input=raw, capture_output=True, check=True).stdout
    lines = listing.decode().splitlines()
    names = [line.split()[-1] if " -> " not in line else line.split(" -> ")[0].split()[-1] for line in lines]
    assert names == [name for name, _, _ in read_newc(raw)]
    console = next(line for line in lines if line.endswith(" dev/console"))
    assert console.startswith("c") and "5,   1" in console  # char device 5:1, as the kernel expects


@needs_busybox
def test_cache_by_content(tmp_path: Path) -> None:
    first = build_initramfs(InitramfsSpec(), cache_root=tmp_path)
    mtime = first.stat().st_mtime_ns
    again = build_initramfs(InitramfsSpec(), cache_root=tmp_path)
    assert again == first and again.stat().st_mtime_ns == mtime
    other = build_initramfs(InitramfsSpec(commands_before_marker=("true",)), cache_root=tmp_path)
    assert other != first
    assert gzip.decompress(first.read_bytes()) != gzip.decompress(other.read_bytes())


@needs_busybox
def test_extra_files_binaries_and_custom_init(tmp_path: Path) -> None:
    conf = tmp_path / "a.conf"
    conf.write_text("x=1\n")
    taskset = Path(shutil.which("taskset") or "/usr/bin/taskset")
    spec = InitramfsSpec(
        extra_files=((conf, "/etc/deep/a.conf"),),
        extra_binaries=(taskset,),
        init_script="#!/bin/sh\necho custom\n",
    )
    entries = _entries(build_initramfs(spec, cache_root=tmp_path / "c"))
    assert entries["etc/deep/a.conf"][1] == b"x=1\n"
    assert stat.S_ISDIR(entries["etc/deep"][0])
    assert entries[str(taskset).lstrip("/")][1] == taskset.read_bytes()
    ldd = subprocess.run(["ldd", str(taskset)], capture_output=True, text=True, check=True).stdout
    libc = next(
        part for line in ldd.splitlines() for part in line.split() if "libc.so" in part and "/" in part
    )
    assert entries[libc.lstrip("/")][1] == Path(libc).read_bytes()
    assert entries["init"][1] == b"#!/bin/sh\necho custom\n"


def test_dynamic_or_missing_busybox_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BootError, match="dynamically linked"):
        build_initramfs(InitramfsSpec(), busybox=Path(sys.executable).resolve(), cache_root=tmp_path)
    with pytest.raises(BootError, match="not found"):
        build_initramfs(InitramfsSpec(), busybox=tmp_path / "nope", cache_root=tmp_path)
    text = tmp_path / "script"
    text.write_text("#!/bin/sh\n" * 10)
    with pytest.raises(BootError, match="not a 64-bit ELF"):
        build_initramfs(InitramfsSpec(), busybox=text, cache_root=tmp_path)


@needs_busybox
def test_guest_path_must_be_absolute(tmp_path: Path) -> None:
    conf = tmp_path / "a"
    conf.write_text("")
    for bad in ("etc/a", "/../etc/a", "/"):
        with pytest.raises(InputError):
            build_initramfs(InitramfsSpec(extra_files=((conf, bad),)), cache_root=tmp_path)


def test_newc_writer_layout_by_hand() -> None:
    writer = NewcWriter()
    writer.add_file("ab", b"xyz", 0o644)
    raw = writer.finish()
    # 110-byte header + "ab\0" (3) = 113, padded to 116; data 3 bytes padded to 4; then the trailer.
    assert raw[:6] == b"070701"
    assert int(raw[6 + 8 * 6 : 14 + 8 * 6], 16) == 3  # filesize
    assert int(raw[6 + 8 * 11 : 14 + 8 * 11], 16) == 3  # namesize includes the NUL
    assert raw[110:116] == b"ab\0\0\0\0"
    assert raw[116:120] == b"xyz\0"
    assert raw[120:126] == b"070701" and b"TRAILER!!!\0" in raw[120:]
    assert len(raw) % 4 == 0
    with pytest.raises(InputError):
        read_newc(raw[:50])

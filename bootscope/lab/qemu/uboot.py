"""A real boot loader on any machine: Debian's U-Boot for QEMU's PC (package ``u-boot-qemu``, its
``qemu-x86/u-boot.rom``, built with ``CONFIG_BOOTSTAGE_REPORT=y``) as the firmware of a QEMU board,
booting a kernel and initramfs from a small disk that bootscope writes.

The disk holds one ext2 partition (an MBR written here, the file system by ``mkfs.ext2 -d``) with
the kernel, the initramfs and ``boot.scr``: a U-Boot script in U-Boot's legacy image format (its
64-byte header and CRC32s written here, as ``mkimage -T script`` would) that loads both and starts
the kernel with ``zboot``. U-Boot's distro boot finds the script by itself, prints its bootstage
report just before the kernel starts, and the kernel's console follows on the same serial line.
(U-Boot 2023.01's extlinux path passes x86 kernels a 4 KiB initrd, and its 64-bit build cannot
start a bzImage: hence the script and the 32-bit ROM.) The initramfs is loaded at 256 MiB, above
where the kernel decompresses itself.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import struct
import tempfile
import zlib
from pathlib import Path

from bootscope import defaults
from bootscope.errors import BootError, InputError
from bootscope.lab.qemu.filelock import locked
from bootscope.lab.qemu.image_tools import run_tool

PACKAGE = "u-boot-qemu"
ROM = Path("usr/lib/u-boot/qemu-x86/u-boot.rom")
KERNEL_ADDR = 0x03000000
INITRD_ADDR = 0x10000000  # 256 MiB: a board of 512 MiB or more
SECTOR_BYTES = 512
PARTITION_START = 2048  # sectors: 1 MiB, as partitioning tools align
_APT_TIMEOUT_S = 600.0
_MKFS_TIMEOUT_S = 120.0
# A command line U-Boot's script language takes as it is (no quotes, ';', '$' or braces)
_CMDLINE_RE = re.compile(r"^[A-Za-z0-9_=.,:/+@ -]*$")
# Legacy image header (U-Boot include/image.h): magic, types of a script for Linux on x86
_MAGIC, _OS_LINUX, _ARCH_I386, _TYPE_SCRIPT, _COMP_NONE = 0x27051956, 5, 3, 6, 0


def firmware_dir() -> Path:
    """Return ``cache_dir()/firmware`` (created on demand)."""
    path = defaults.cache_dir() / "firmware"
    path.mkdir(parents=True, exist_ok=True)
    return path


def uboot_rom() -> Path:
    """Return Debian's U-Boot ROM for QEMU's x86 PC, downloading and unpacking ``u-boot-qemu`` into
    the cache first when absent. Raises BootError when apt-get or dpkg-deb are missing or fail."""
    target = firmware_dir() / PACKAGE
    if (target / ROM).is_file():
        return target / ROM
    with locked(firmware_dir() / f"{PACKAGE}.lock"):
        if (target / ROM).is_file():
            return target / ROM
        for tool in ("apt-get", "dpkg-deb"):
            if shutil.which(tool) is None:
                raise BootError(f"{tool} not found: Debian's {PACKAGE} needs apt and dpkg")
        staging = Path(tempfile.mkdtemp(prefix=f".{PACKAGE}.", dir=firmware_dir()))
        try:
            run_tool(["apt-get", "download", "-q", PACKAGE], what=f"apt-get download {PACKAGE}",
                     timeout_s=_APT_TIMEOUT_S, cwd=staging)  # fmt: skip
            debs = sorted(staging.glob("*.deb"))
            if len(debs) != 1:
                raise BootError(f"apt-get download {PACKAGE} produced {len(debs)} .deb files, expected one")
            run_tool(["dpkg-deb", "-x", str(debs[0]), str(staging / "root")], what=f"unpack {debs[0].name}",
                     timeout_s=_APT_TIMEOUT_S)  # fmt: skip
            if not (staging / "root" / ROM).is_file():
                raise BootError(f"{PACKAGE} holds no {ROM}")
            if target.exists():
                shutil.rmtree(target)
            os.replace(staging / "root", target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return target / ROM


def boot_script(cmdline: str) -> bytes:
    """Return ``boot.scr``: the script that loads ``/vmlinuz`` and ``/initrd.gz`` from the first
    partition of the first virtio disk and starts the kernel with ``cmdline``, as a legacy U-Boot
    script image. Raises InputError for a command line the script language would misread."""
    if not _CMDLINE_RE.match(cmdline):
        raise InputError(
            f"a U-Boot board's command line takes letters, digits and =.,:/+@- only: {cmdline!r}"
        )
    script = (
        f"setenv bootargs {cmdline}\n"
        f"ext2load virtio 0:1 {KERNEL_ADDR:08x} /vmlinuz\n"
        f"ext2load virtio 0:1 {INITRD_ADDR:08x} /initrd.gz\n"
        f"zboot {KERNEL_ADDR:08x} 0 {INITRD_ADDR:08x} ${{filesize}}\n"
    ).encode()
    body = struct.pack(">II", len(script), 0) + script  # one part: its length, then the end mark
    body += b"\0" * (-len(body) % 4)
    name = b"bootscope".ljust(32, b"\0")

    def header(header_crc: int) -> bytes:
        return struct.pack(
            ">7I4B32s", _MAGIC, header_crc, 0, len(body), 0, 0, zlib.crc32(body),
            _OS_LINUX, _ARCH_I386, _TYPE_SCRIPT, _COMP_NONE, name,
        )  # fmt: skip

    return header(zlib.crc32(header(0))) + body


def boot_disk(kernel: Path, initrd: Path, cmdline: str, into: Path | None = None) -> Path:
    """Return a raw disk image (kept in ``into``, default the firmware cache, by its contents'
    identity) whose one ext2 partition holds ``kernel``, ``initrd`` and the boot script for
    ``cmdline``. Raises BootError when mkfs.ext2 is missing or fails, InputError for a command line
    U-Boot would misread."""
    script = boot_script(cmdline)
    identity = hashlib.sha256(script)
    for path in (kernel, initrd):
        stat = path.stat()
        identity.update(f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    place = into or firmware_dir()
    disk = place / f"uboot-disk-{identity.hexdigest()[:24]}.img"
    if disk.is_file():
        return disk
    if shutil.which("mkfs.ext2") is None:
        raise BootError("mkfs.ext2 not found: apt-get install e2fsprogs")
    with tempfile.TemporaryDirectory(prefix=".uboot-disk.", dir=place) as scratch:
        root = Path(scratch) / "root"
        root.mkdir()
        shutil.copyfile(kernel, root / "vmlinuz")
        shutil.copyfile(initrd, root / "initrd.gz")
        (root / "boot.scr").write_bytes(script)
        used_mb = sum(p.stat().st_size for p in root.iterdir()) / 2**20
        size_mb = int(used_mb * 1.25) + 8
        fs = Path(scratch) / "fs.img"
        run_tool(["mkfs.ext2", "-q", "-F", "-d", str(root), "-L", "bootscope", str(fs), f"{size_mb}M"],
                 what="mkfs.ext2 of the U-Boot board's disk", timeout_s=_MKFS_TIMEOUT_S)  # fmt: skip
        partial = Path(scratch) / "disk.img"
        _write_disk(partial, fs)
        os.replace(partial, disk)
    return disk


def _write_disk(disk: Path, fs: Path) -> None:
    """Write an MBR with one bootable Linux partition at 1 MiB holding ``fs``, then ``fs``."""
    sectors = fs.stat().st_size // SECTOR_BYTES
    mbr = bytearray(SECTOR_BYTES)
    mbr[446:462] = struct.pack("<B3sB3sII", 0x80, b"\0\0\0", 0x83, b"\0\0\0", PARTITION_START, sectors)
    mbr[510:512] = b"\x55\xaa"
    with disk.open("wb") as out, fs.open("rb") as source:
        out.write(mbr)
        out.seek(PARTITION_START * SECTOR_BYTES)
        shutil.copyfileobj(source, out)

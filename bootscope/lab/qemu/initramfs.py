"""Build the guest's initramfs: busybox-static, an ``/init`` that prints the marker, optional extras.

The archive is a gzip-compressed cpio in the "newc" format, written here byte by byte (no host cpio
needed), deterministic (every mtime, uid and gid is 0) and cached under ``cache_dir()/initramfs/`` by
the hash of its uncompressed contents, so building it again costs one hash and no compression.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from bootscope import defaults
from bootscope.errors import BootError, InputError

BUSYBOX = Path("/bin/busybox")
_NEWC_MAGIC = b"070701"
_TRAILER = "TRAILER!!!"
_DIRS = (
    "bin",
    "sbin",
    "usr",
    "usr/bin",
    "usr/sbin",
    "proc",
    "sys",
    "dev",
    "etc",
    "tmp",
    "root",
    "lib",
    "lib64",
)
# include/uapi/linux/kdev_t.h / Documentation/admin-guide/devices.txt: console is char 5:1. The kernel
# opens /dev/console for init's stdin/out/err before devtmpfs is mounted, so the archive carries it.
_CONSOLE = ("dev/console", 5, 1)
_PT_INTERP = 3
_LDD_PATH_RE = re.compile(r"(?:=>\s*)?(/\S+)\s+\(0x[0-9a-fA-F]+\)")


@dataclass(frozen=True, slots=True)
class InitramfsSpec:
    """What goes into the guest's initramfs besides busybox and the default ``/init``.

    ``commands_before_marker`` run (in order, by busybox sh) after proc/sys/dev are mounted and before
    the marker line; ``extra_files`` are (host path, guest path) pairs; ``extra_binaries`` are copied to
    the same path in the guest together with the shared libraries that ``ldd`` names;
    ``init_script`` replaces the whole ``/init``; ``poweroff`` ends the default ``/init`` with
    ``poweroff -f`` (else it execs a shell and the caller stops QEMU on the marker).
    """

    commands_before_marker: tuple[str, ...] = ()
    extra_files: tuple[tuple[Path, str], ...] = ()
    extra_binaries: tuple[Path, ...] = ()
    init_script: str | None = None
    poweroff: bool = True
    marker_name: str = "init"


def init_script(spec: InitramfsSpec) -> str:
    """Return the text of ``/init`` for ``spec`` (the custom one if the spec carries it)."""
    if spec.init_script is not None:
        return spec.init_script
    lines = [
        "#!/bin/sh",
        "# bootscope guest init: mount the pseudo file systems, run the user's commands, print the marker.",
        "export PATH=/bin:/sbin:/usr/bin:/usr/sbin",
        "mount -t proc proc /proc",
        "mount -t sysfs sysfs /sys",
        "mount -t devtmpfs devtmpfs /dev 2>/dev/null",
        *spec.commands_before_marker,
        # The first field of /proc/uptime is the guest's seconds since boot (fs/proc/uptime.c).
        "read bootscope_up bootscope_idle < /proc/uptime",
        f'echo "{defaults.MARKER_PREFIX} {spec.marker_name} uptime=$bootscope_up"',
    ]
    lines.append("poweroff -f" if spec.poweroff else "exec /bin/sh")
    return "\n".join(lines) + "\n"


def build_initramfs(spec: InitramfsSpec, busybox: Path = BUSYBOX, cache_root: Path | None = None) -> Path:
    """Return the path of a gzip newc cpio initramfs for ``spec``, building it only if not cached.

    Raises BootError if busybox is missing or dynamically linked, or if an extra file or binary cannot
    be read; InputError for a guest path that is not absolute or escapes the root.
    """
    archive = _archive_bytes(spec, busybox)
    digest = hashlib.sha256(archive).hexdigest()[:24]
    root = cache_root if cache_root is not None else defaults.cache_dir() / "initramfs"
    root.mkdir(parents=True, exist_ok=True)
    target = root / f"initramfs-{digest}.cpio.gz"
    if target.is_file():
        return target
    tmp = root / f".{target.name}.{os.getpid()}.tmp"
    # mtime=0 keeps the compressed file deterministic too.
    tmp.write_bytes(gzip.compress(archive, compresslevel=6, mtime=0))
    os.replace(tmp, target)  # atomic: concurrent builders write identical bytes
    return target


def _archive_bytes(spec: InitramfsSpec, busybox: Path) -> bytes:
    _check_static(busybox)
    writer = NewcWriter()
    for directory in _DIRS:
        writer.add_dir(directory)
    name, major, minor = _CONSOLE
    writer.add_char_device(name, major, minor)
    writer.add_file("bin/busybox", _read(busybox), 0o755)
    files: dict[str, tuple[bytes, int]] = {}
    for binary in spec.extra_binaries:
        for host_path in (binary, *_shared_libraries(binary)):
            files[_guest_path(str(host_path))] = (_read(host_path), 0o755)
    for host_path, guest in spec.extra_files:
        mode = 0o755 if os.access(host_path, os.X_OK) else 0o644
        files[_guest_path(guest)] = (_read(host_path), mode)
    files["init"] = (init_script(spec).encode(), 0o755)
    for applet in _applets(busybox):
        if applet != "bin/busybox" and applet not in files:  # a user's binary wins over an applet
            writer.add_symlink(applet, "/bin/busybox")
    for guest, (data, mode) in sorted(files.items()):
        for parent in reversed(PurePosixPath(guest).parents):
            if str(parent) != ".":
                writer.add_dir(str(parent))
        writer.add_file(guest, data, mode)
    return writer.finish()


class NewcWriter:
    """Writes a cpio archive in the SVR4 "newc" format that the kernel's initramfs unpacker reads.

    The format is documented in the kernel's Documentation/driver-api/early-userspace/buffer-format.rst:
    a 110-byte ASCII header (magic ``070701`` and 13 eight-digit hex fields), the NUL-terminated name
    padded to a multiple of 4, then the data padded to a multiple of 4; a ``TRAILER!!!`` entry ends it.
    """

    def __init__(self) -> None:
        self._chunks: list[bytes] = []
        self._names: set[str] = set()
        self._inode = 1

    def add_dir(self, name: str, mode: int = 0o755) -> None:
        """Add a directory (once: a repeated name is ignored)."""
        if name not in self._names:
            self._entry(name, stat.S_IFDIR | mode, b"", nlink=2)

    def add_file(self, name: str, data: bytes, mode: int = 0o644) -> None:
        """Add a regular file holding ``data``."""
        self._entry(name, stat.S_IFREG | mode, data)

    def add_symlink(self, name: str, target: str) -> None:
        """Add a symbolic link to ``target``."""
        self._entry(name, stat.S_IFLNK | 0o777, target.encode())

    def add_char_device(self, name: str, major: int, minor: int, mode: int = 0o600) -> None:
        """Add a character device node (no root privilege needed: it is only bytes in the archive)."""
        self._entry(name, stat.S_IFCHR | mode, b"", rdev=(major, minor))

    def finish(self) -> bytes:
        """Return the archive bytes with the trailer appended."""
        self._entry(_TRAILER, 0, b"", inode=0, nlink=1)
        return b"".join(self._chunks)

    def _entry(
        self,
        name: str,
        mode: int,
        data: bytes,
        nlink: int = 1,
        rdev: tuple[int, int] = (0, 0),
        inode: int | None = None,
    ) -> None:
        encoded = name.encode() + b"\0"
        fields = (
            self._inode if inode is None else inode,
            mode,
            0,  # uid
            0,  # gid
            nlink,
            0,  # mtime: 0 keeps the archive reproducible
            len(data),
            0,  # devmajor
            0,  # devminor
            rdev[0],
            rdev[1],
            len(encoded),
            0,  # check: only used by the "crc" variant 070702
        )
        header = _NEWC_MAGIC + b"".join(b"%08X" % value for value in fields)
        self._chunks += [header, encoded, _pad(len(header) + len(encoded)), data, _pad(len(data))]
        self._names.add(name)
        self._inode += 1


def read_newc(archive: bytes) -> list[tuple[str, int, bytes]]:
    """Return the (name, mode, data) entries of an uncompressed newc archive, trailer excluded.

    Raises InputError on a truncated archive or a bad magic number.
    """
    entries: list[tuple[str, int, bytes]] = []
    offset = 0
    while True:
        header = archive[offset : offset + 110]
        if len(header) < 110 or header[:6] != _NEWC_MAGIC:
            raise InputError(f"not a newc cpio archive at byte {offset}")
        values = [int(header[6 + 8 * i : 14 + 8 * i], 16) for i in range(13)]
        mode, size, namesize = values[1], values[6], values[11]
        name_start = offset + 110
        name = archive[name_start : name_start + namesize - 1].decode()
        data_start = name_start + namesize + len(_pad(110 + namesize))
        data = archive[data_start : data_start + size]
        if len(data) < size:
            raise InputError(f"newc archive truncated in {name!r}")
        if name == _TRAILER:
            return entries
        entries.append((name, mode, data))
        offset = data_start + size + len(_pad(size))


def _pad(length: int) -> bytes:
    return b"\0" * (-length % 4)


def _guest_path(path: str) -> str:
    pure = PurePosixPath(path)
    if not pure.is_absolute() or ".." in pure.parts or pure == PurePosixPath("/"):
        raise InputError(f"guest path must be absolute and inside the root: {path!r}")
    return str(pure.relative_to("/"))


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as error:
        raise BootError(f"cannot read {path} for the initramfs: {error.strerror}") from error


def _check_static(busybox: Path) -> None:
    """Raise BootError unless ``busybox`` is an ELF executable without a program interpreter."""
    hint = "install Debian's busybox-static (apt-get install busybox-static)"
    try:
        with busybox.open("rb") as handle:
            ident = handle.read(64)
            if len(ident) < 64 or ident[:4] != b"\x7fELF" or ident[4] != 2:
                raise BootError(f"{busybox} is not a 64-bit ELF executable: {hint}")
            byteorder: Literal["little", "big"] = "little" if ident[5] == 1 else "big"
            phoff = int.from_bytes(ident[32:40], byteorder)
            phentsize = int.from_bytes(ident[54:56], byteorder)
            phnum = int.from_bytes(ident[56:58], byteorder)
            handle.seek(phoff)
            table = handle.read(phentsize * phnum)
    except FileNotFoundError as error:
        raise BootError(f"busybox not found at {busybox}: {hint}") from error
    except OSError as error:
        raise BootError(f"cannot read {busybox}: {error.strerror}") from error
    for index in range(phnum):
        p_type = int.from_bytes(table[index * phentsize : index * phentsize + 4], byteorder)
        if p_type == _PT_INTERP:
            # A dynamically linked busybox needs the host's libc in the guest: refuse it.
            raise BootError(f"{busybox} is dynamically linked: {hint}")


def _applets(busybox: Path) -> list[str]:
    try:
        done = subprocess.run(
            [str(busybox), "--list-full"], capture_output=True, text=True, timeout=30, check=True
        )
    except (OSError, subprocess.SubprocessError) as error:
        raise BootError(f"cannot list the applets of {busybox}: {error}") from error
    return sorted({line.strip() for line in done.stdout.splitlines() if line.strip() and ".." not in line})


def _shared_libraries(binary: Path) -> list[Path]:
    """Return the shared libraries (and the loader) that ``ldd`` names for ``binary``; [] if static."""
    if not binary.is_file():
        raise BootError(f"no such binary for the initramfs: {binary}")
    if shutil.which("ldd") is None:
        raise BootError("ldd not found: it names the libraries an extra binary needs")
    done = subprocess.run(["ldd", str(binary)], capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0:
        if "not a dynamic executable" in done.stdout + done.stderr:
            return []
        raise BootError(f"ldd {binary} failed: {done.stderr.strip() or done.returncode}")
    libraries: list[Path] = []
    for line in done.stdout.splitlines():
        if "not found" in line:
            raise BootError(f"{binary} needs a library the host lacks: {line.strip()}")
        match = _LDD_PATH_RE.search(line)
        if match:
            libraries.append(Path(match.group(1)))
    return libraries

"""bootscope's initramfs for booting a system image's root with a kernel the image has no modules for.

An image's own initramfs and ``/lib/modules`` fit the image's kernel only. To boot another kernel on
the same root file system, bootscope builds a small initramfs for that kernel: busybox, the kernel's
own modules that reach the root disk (virtio_pci, virtio_blk, ext4 where they are modules, each after
its dependencies, plus virtio_net for a later network), and an ``/init`` that loads them, waits for the
root device, mounts it, copies the modules into the new root's ``/lib/modules/RELEASE`` (the disk is
attached with ``snapshot=on``: the copy never reaches the image) and hands over to ``/sbin/init`` with
``switch_root``. The root also gets the modules the image's systemd loads by name (SYSTEMD_MODULES),
and the indexes that the host's ``depmod`` writes for all of them, so the image's kmod finds them.

A kernel's modules are looked for where a Debian kernel package (unpacked in bootscope's cache, or
installed on a host) keeps them: the kernel at ``DIR/boot/vmlinuz-R`` has them in
``DIR/lib/modules/R``. The package holds no ``modules.dep`` (depmod writes it when the package is
installed), so the dependencies are each module's own ``depends=`` field (its ``.modinfo``, which
the kernel build writes from the symbols the module uses), read from the module file; ``.ko.xz``,
``.ko.zst`` and ``.ko.gz`` files are decompressed here, so busybox's insmod only ever sees ``.ko``.
"""

from __future__ import annotations

import gzip
import lzma
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from bootscope.errors import BootError, InputError
from bootscope.lab.qemu.initramfs import InitramfsSpec, build_initramfs

# What the root disk needs: the PCI transport, the block driver, the root's file system.
REQUIRED_MODULES = ("virtio_pci", "virtio_blk", "ext4")
# Loaded when the kernel has them as modules, so a later network (the SSH target) finds its driver.
OPTIONAL_MODULES = ("virtio_net",)
# Not loaded by /init, but put in the root for the image's own systemd, which loads them by name on a
# QEMU guest (bookworm's systemd 252: autofs4 in PID 1, the modprobe@ units of sysinit.target, udev's
# qemu_fw_cfg for QEMU's fw_cfg device), where they are modules of the kernel.
SYSTEMD_MODULES = ("autofs4", "configfs", "dm_mod", "drm", "efi_pstore", "fuse", "loop", "qemu_fw_cfg")
_SUFFIXES = (".ko", ".ko.xz", ".ko.zst", ".ko.gz")
_DEPENDS_RE = re.compile(rb"\x00depends=([A-Za-z0-9_,-]*)\x00")
_SOFTDEP_RE = re.compile(rb"\x00softdep=pre: ?([A-Za-z0-9_ -]*)\x00")
# How long /init waits for the root device, in steps of 0.1 s of guest time.
_ROOT_WAIT_STEPS = 600
LOG_PREFIX = "bootscope-initramfs:"


@dataclass(frozen=True, slots=True)
class RootModule:
    """One module to load: its name, the host file (maybe compressed) and its path in the guest
    relative to ``/lib/modules/RELEASE`` (always ``.ko``)."""

    name: str
    host_path: Path
    guest_path: str


@dataclass(frozen=True, slots=True)
class RootInitramfs:
    """bootscope's initramfs for ``release``: its path, the modules it loads in order, the modules it
    only puts in the root (for the image's systemd), the disk's drivers the kernel has built in, and
    where the modules came from (None: no modules found)."""

    path: Path
    release: str
    modules: tuple[RootModule, ...]
    for_root: tuple[RootModule, ...]
    builtin: tuple[str, ...]
    modules_dir: Path | None

    def describe(self) -> str:
        """Return one line saying what the initramfs does, for the run's notes and each boot."""
        loads = ", ".join(m.name for m in self.modules) or "no modules"
        source = f"from {self.modules_dir}" if self.modules_dir else "(no /lib/modules found for it)"
        built_in = f"; built in: {', '.join(self.builtin)}" if self.builtin else ""
        extra = ", ".join(m.name for m in self.for_root)
        root = f"; the root also gets {extra} for its systemd" if extra else ""
        return f"bootscope's initramfs loads {loads} {source}{built_in}{root}"


def module_name(file_name: str) -> str:
    """Return the module name of a module file name (``virtio-rng.ko.xz`` -> ``virtio_rng``)."""
    for suffix in _SUFFIXES[::-1]:
        if file_name.endswith(suffix):
            file_name = file_name[: -len(suffix)]
            break
    return file_name.replace("-", "_")


def modules_dir_of(kernel: Path, release: str) -> Path | None:
    """Return the ``lib/modules/RELEASE`` directory beside ``DIR/boot/KERNEL`` (or under ``usr/``);
    None if there is none."""
    top = kernel.resolve().parent.parent
    for candidate in (top / "lib" / "modules" / release, top / "usr" / "lib" / "modules" / release):
        if (candidate / "kernel").is_dir():
            return candidate
    return None


def read_module(path: Path) -> bytes:
    """Return the uncompressed ELF of a module file (``.ko``, ``.ko.xz``, ``.ko.zst``, ``.ko.gz``).
    Raises BootError for a file that cannot be read or decompressed."""
    try:
        data = path.read_bytes()
        if path.name.endswith(".xz"):
            return lzma.decompress(data)
        if path.name.endswith(".gz"):
            return gzip.decompress(data)
        if path.name.endswith(".zst"):
            return _unzstd(path)
    except (OSError, lzma.LZMAError, gzip.BadGzipFile, EOFError) as error:
        raise BootError(f"cannot read kernel module {path}: {error}") from error
    return data


def _unzstd(path: Path) -> bytes:
    if shutil.which("zstd") is None:
        raise BootError(f"{path} is zstd-compressed: install Debian's zstd package")
    done = subprocess.run(["zstd", "-dc", str(path)], capture_output=True, timeout=60, check=False)
    if done.returncode != 0:
        raise BootError(f"zstd cannot decompress {path}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def module_depends(elf: bytes) -> tuple[str, ...]:
    """Return the modules ``elf`` needs loaded first: its ``depends=`` field, then the names of its
    ``softdep=pre:`` field (an alias there that is no module's name is skipped by the caller)."""
    names: list[str] = []
    match = _DEPENDS_RE.search(elf)
    if match:
        names += [name for name in match.group(1).decode().split(",") if name]
    soft = _SOFTDEP_RE.search(elf)
    if soft:
        names += [name for name in soft.group(1).decode().split() if name]
    return tuple(module_name(name) for name in names)


def builtin_modules(modules_dir: Path) -> frozenset[str]:
    """Return the names of the modules built into the kernel (``modules.builtin``); empty if absent."""
    try:
        text = (modules_dir / "modules.builtin").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    return frozenset(module_name(Path(line.strip()).name) for line in text.splitlines() if line.strip())


def module_files(modules_dir: Path) -> dict[str, Path]:
    """Return every module file under ``modules_dir/kernel`` by module name."""
    found: dict[str, Path] = {}
    for path in sorted((modules_dir / "kernel").rglob("*.ko*")):
        if path.name.endswith(_SUFFIXES):
            found.setdefault(module_name(path.name), path)
    return found


def load_order(
    wanted: Iterable[str],
    available: Mapping[str, object],
    builtin: frozenset[str],
    depends: Callable[[str], tuple[str, ...]],
    required: Iterable[str] = (),
) -> tuple[str, ...]:
    """Return the modules to load for ``wanted``, each after the modules it depends on, each once.

    A name built in is skipped; a wanted name neither built in nor in ``available`` is skipped unless
    it is ``required`` (then InputError); a dependency that is no module here is skipped (the kernel
    refuses the module with a clear line of its own if it mattered).
    """
    required_names = set(required)
    order: list[str] = []
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if name in order or name in visiting or name in builtin or name not in available:
            return
        visiting.add(name)
        for dependency in depends(name):
            visit(dependency)
        visiting.discard(name)
        order.append(name)

    for name in wanted:
        if name not in builtin and name not in available and name in required_names:
            raise InputError(f"no {name} module and no built-in {name} driver")
        visit(name)
    return tuple(order)


def root_init_script(release: str, modules: Iterable[tuple[str, str]]) -> str:
    """Return ``/init``: load ``modules`` ((name, path under ``/lib/modules/RELEASE``) pairs) in order,
    each unless ``/sys/module/NAME`` shows it loaded already, wait for
    the ``root=`` device of the kernel command line (``/dev/vda`` if none), mount it (``rw`` or
    ``ro`` and ``rootfstype=`` as the command line says), copy the modules into its
    ``/lib/modules/RELEASE`` unless it has that directory, and ``switch_root`` to ``init=`` or
    ``/sbin/init``. Progress and failures go to /dev/kmsg (printk-timed on the console); a failure
    powers the guest off."""
    loads = "\n".join(f'load {name} "$mods/{path}"' for name, path in modules)
    return f"""#!/bin/sh
# bootscope's initramfs: mount a system image's root for kernel {release}, which the image has no
# modules for, and hand over to its init.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
say() {{ echo "{LOG_PREFIX} $*" > /dev/kmsg 2>/dev/null || echo "{LOG_PREFIX} $*"; }}
fail() {{ say "$*"; echo "{LOG_PREFIX} $*"; poweroff -f; }}
mods=/lib/modules/{release}
load() {{ [ -d "/sys/module/$1" ] || insmod "$2" || fail "insmod $2 failed"; }}
say "kernel {release}: loading the root disk's modules"
{loads}
root=/dev/vda; fstype=; mode=ro; init=/sbin/init
for arg in $(cat /proc/cmdline); do
    case "$arg" in
        root=*) root="${{arg#root=}}" ;;
        rootfstype=*) fstype="${{arg#rootfstype=}}" ;;
        init=*) init="${{arg#init=}}" ;;
        rw) mode=rw ;;
        ro) mode=ro ;;
    esac
done
case "$root" in /dev/*) ;; *) fail "root=$root: only a /dev path is understood" ;; esac
steps=0
while [ ! -b "$root" ]; do
    steps=$((steps + 1))
    [ "$steps" -gt {_ROOT_WAIT_STEPS} ] && fail "$root did not appear: the kernel lacks the disk's driver"
    usleep 100000
done
mkdir -p /newroot
if [ -n "$fstype" ]; then
    mount -t "$fstype" -o "$mode" "$root" /newroot || fail "cannot mount $root ($fstype)"
else
    mount -o "$mode" "$root" /newroot || fail "cannot mount $root"
fi
if [ ! -d "/newroot$mods" ]; then
    mkdir -p /newroot/lib/modules && cp -a "$mods" /newroot/lib/modules/ 2>/dev/null
fi
say "root $root mounted $mode: switch_root to $init"
umount /sys /proc
mount --move /dev /newroot/dev 2>/dev/null || umount /dev
exec switch_root /newroot "$init"
"""


def build_root_initramfs(kernel: Path, release: str) -> RootInitramfs:
    """Return bootscope's initramfs that boots kernel ``kernel`` (release ``release``) on a system
    image's root (cached by content like every bootscope initramfs).

    Its /init loads the disk's modules; the root gets those and SYSTEMD_MODULES with the indexes the
    host's ``depmod`` writes for them, so the image's kmod (systemd, udev, modprobe) finds them.
    Raises InputError when the kernel has modules but neither the module nor a built-in driver for
    one of REQUIRED_MODULES; BootError when a module cannot be read, depmod fails or busybox is
    unusable. A kernel without any modules directory is taken to have the drivers built in (its /init
    powers off with one line if the root device never appears)."""
    modules_dir = modules_dir_of(kernel, release)
    if modules_dir is None:
        spec = InitramfsSpec(init_script=root_init_script(release, ()))
        return RootInitramfs(build_initramfs(spec), release, (), (), (), None)
    builtin = builtin_modules(modules_dir)
    files = module_files(modules_dir)
    elves: dict[str, bytes] = {}

    def depends(name: str) -> tuple[str, ...]:
        elves[name] = read_module(files[name])
        return module_depends(elves[name])

    try:
        names = load_order(
            (*REQUIRED_MODULES, *OPTIONAL_MODULES), files, builtin, depends, required=REQUIRED_MODULES
        )
    except InputError as error:
        raise InputError(
            f"kernel {release}: {error} in {modules_dir}: it cannot reach the image's root disk"
        ) from None
    for_root = tuple(
        name for name in load_order(SYSTEMD_MODULES, files, builtin, depends) if name not in names
    )

    def module(name: str) -> RootModule:
        return RootModule(name, files[name], _guest_module_path(files[name], modules_dir))

    loaded, shipped = tuple(module(name) for name in names), tuple(module(name) for name in for_root)
    with tempfile.TemporaryDirectory(prefix="bootscope-modules-") as temporary:
        tree = Path(temporary) / "lib" / "modules" / release
        for item in (*loaded, *shipped):
            (tree / item.guest_path).parent.mkdir(parents=True, exist_ok=True)
            (tree / item.guest_path).write_bytes(elves[item.name])
        for extra in ("modules.builtin", "modules.builtin.modinfo", "modules.order"):
            if (modules_dir / extra).is_file():
                shutil.copyfile(modules_dir / extra, tree / extra)
        _depmod(Path(temporary), release)
        staged = tuple(
            (path, f"/lib/modules/{release}/{path.relative_to(tree).as_posix()}")
            for path in sorted(tree.rglob("*"))
            if path.is_file()
        )
        spec = InitramfsSpec(
            init_script=root_init_script(release, ((m.name, m.guest_path) for m in loaded)),
            extra_files=staged,
        )
        path = build_initramfs(spec)
    built_in = tuple(name for name in (*REQUIRED_MODULES, *OPTIONAL_MODULES) if name in builtin)
    return RootInitramfs(path, release, loaded, shipped, built_in, modules_dir)


def _depmod(base: Path, release: str) -> None:
    """Write modules.dep and its binary indexes for the modules under ``base/lib/modules/RELEASE``."""
    if shutil.which("depmod") is None:
        raise BootError("depmod not found: install Debian's kmod package (it indexes the kernel's modules)")
    done = subprocess.run(
        ["depmod", "-b", str(base), release], capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        raise BootError(f"depmod for {release} failed: {done.stderr.strip()[-300:]}")


def _guest_module_path(host_path: Path, modules_dir: Path) -> str:
    relative = host_path.relative_to(modules_dir).as_posix()
    for suffix in (".xz", ".zst", ".gz"):
        relative = relative.removesuffix(suffix)
    return relative

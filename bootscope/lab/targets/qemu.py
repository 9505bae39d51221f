"""LocalQemu: QEMU guests on this host (the :class:`~bootscope.lab.targets.base.BootsGuests` capability).

It hands a workload what it needs to boot guests (kernels resolved, initramfs images built, an
accelerator chosen) and boots one guest at a time, calling back for every console line. The
protocols live in :mod:`bootscope.lab.targets.base` (re-exported here for the run use cases).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from bootscope.errors import BootError, InputError
from bootscope.lab.hostinfo import host_info
from bootscope.lab.qemu.accel import AccelChoice, choose_accel
from bootscope.lab.qemu.image import Image, find_image
from bootscope.lab.qemu.initramfs import InitramfsSpec, build_initramfs
from bootscope.lab.qemu.kernels import KernelImage, read_image_release, resolve_kernel
from bootscope.lab.qemu.kexec_chain import build_chain_initramfs
from bootscope.lab.qemu.process import BootConfig, boot_once, validate
from bootscope.lab.qemu.root_initramfs import RootInitramfs, build_root_initramfs
from bootscope.lab.targets.base import BootsGuests, LineCallback, StartCallback, Target
from bootscope.lab.where import QEMU_HERE, Where
from bootscope.model import Boot
from bootscope.parse.patterns import PANIC_RE

__all__ = ["BootsGuests", "LineCallback", "LocalQemu", "StartCallback", "Target"]


class LocalQemu:
    """QEMU on this host: kernels from paths or Debian's packages, bootscope's initramfs built from
    the host's busybox, KVM when a probe boot shows it works."""

    name = "local-qemu"

    def resolve_kernel(self, spec: str, initrd: Path | None = None) -> KernelImage:
        """Return the kernel ``spec`` names, fetching Debian's package into the cache if needed."""
        return resolve_kernel(spec, initrd=initrd)

    def resolve_to(self, spec: str) -> tuple[Path, str | None]:
        """Return the kernel a kexec chain loads: ``debian:...`` resolved, or any existing file taken
        as it is, even if it is not a kernel (the guest's kexec refusing it is a result to record).
        Raises InputError for a missing file, BootError for a failed download."""
        if spec.startswith("debian:"):
            image = resolve_kernel(spec)
            return image.image, image.release
        path = Path(spec).expanduser()
        if not path.is_file():
            raise InputError(f"no such TO kernel: {spec}")
        try:
            return path.resolve(), read_image_release(path)
        except BootError:
            return path.resolve(), None

    def build_initramfs(self, commands: tuple[str, ...], files: tuple[tuple[Path, str], ...]) -> Path:
        """Return bootscope's initramfs (cached by content) with ``commands`` and ``files``."""
        return build_initramfs(InitramfsSpec(commands_before_marker=commands, extra_files=files))

    def resolve_image(self, name: str) -> Image:
        """Return the image ``name`` from the user's cache; raises InputError if it was never built."""
        return find_image(name)

    def build_root_initramfs(self, kernel: KernelImage) -> RootInitramfs:
        """Return bootscope's root initramfs for ``kernel`` (see
        :func:`bootscope.lab.qemu.root_initramfs.build_root_initramfs`); raises InputError for a kernel
        of unknown release or without the root disk's drivers."""
        if not kernel.release:
            raise InputError(f"kernel {kernel.spec} carries no release string: its modules cannot be found")
        return build_root_initramfs(kernel.image, kernel.release)

    def build_chain_initramfs(self, to_kernel: Path) -> Path:
        """Return the chain initramfs (busybox, the host's kexec and ``to_kernel``)."""
        return build_chain_initramfs(to_kernel)

    def choose_accel(
        self, requested: str, kernel: Path, initrd: Path | None, reprobe: bool = False
    ) -> AccelChoice:
        """Return KVM or TCG for ``requested``, probing KVM with one boot for ``auto`` (an answer
        remembered for this host, kernel and QEMU is reused unless ``reprobe``)."""
        return choose_accel(requested, kernel, initrd, reprobe=reprobe)

    def check(self, config: BootConfig) -> None:
        """Raise InputError for options QEMU cannot take (see :func:`bootscope.lab.qemu.process.validate`)."""
        validate(config)

    def boot(self, config: BootConfig, on_line: LineCallback | None, on_start: StartCallback | None) -> Boot:
        """Boot ``config`` in QEMU once (see :func:`bootscope.lab.qemu.process.boot_once`), ending it as a
        panic when a line matches the pattern table's panic pattern."""
        if config.panic_regex is None:
            config = replace(config, panic_regex=PANIC_RE.pattern)
        return boot_once(config, on_line=on_line, on_start=on_start)

    def host_info(self) -> dict[str, Any]:
        """Return this host's description (hostname, CPU, cores, kernel, QEMU and bootscope versions)."""
        return host_info()


def check_where(where: Where) -> Where:
    """Return ``where`` as this host's QEMU (a kernel booted in a guest here: the kernel itself is
    checked when the plan is)."""
    return replace(where, address=QEMU_HERE)


def open_where(where: Where) -> LocalQemu:
    """Return this host's QEMU, the target a guest plan boots on."""
    return LocalQemu()

"""The files a labgrid environment may ask bootscope for: the ``LG_BOOTSCOPE_*`` variables its
``!template`` lines name, set before labgrid reads the file.

A file that names ``LG_BOOTSCOPE_KERNEL`` or ``LG_BOOTSCOPE_INITRD`` gets Debian's cloud kernel and
bootscope's initramfs, resolved and built here, unless the variable is already set
(``examples/labgrid-qemu.yaml`` is such a board: labgrid's QEMU driver). ``LG_BOOTSCOPE_UBOOT`` and
``LG_BOOTSCOPE_UBOOT_DISK`` give Debian's U-Boot for QEMU and a disk it boots the same kernel and
initramfs from (``examples/labgrid-uboot-qemu.yaml``: a board with a real boot loader, whose
bootstage report is in every boot's numbers). ``LG_BOOTSCOPE_SHELL_INITRD`` is bootscope's shell
initramfs carrying that kernel (``examples/labgrid-shell-qemu.yaml``: a board that reboots cold, warm
and by kexec from its own shell). ``LG_BOOTSCOPE_IMAGE_DISK``, ``_KERNEL`` and ``_INITRD`` are the
files of the system image ``LG_BOOTSCOPE_IMAGE`` names (``examples/labgrid-image-qemu.yaml``: a whole
Debian system to its login prompt).

labgrid reads its ``!template`` values from this process's environment, so this is the one place in
bootscope that writes it; it runs when the labgrid kind opens a board (the runner, ``tune``'s read of
the board's own command line), never in a use case.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from bootscope.errors import InputError
from bootscope.lab.qemu.shell_initramfs import build_shell_initramfs
from bootscope.lab.qemu.uboot import PACKAGE as UBOOT_PACKAGE
from bootscope.lab.qemu.uboot import boot_disk, uboot_rom
from bootscope.lab.targets.labgrid.address import parse_board
from bootscope.lab.targets.qemu import LocalQemu

KERNEL_VARIABLE = "LG_BOOTSCOPE_KERNEL"
INITRD_VARIABLE = "LG_BOOTSCOPE_INITRD"
UBOOT_VARIABLE = "LG_BOOTSCOPE_UBOOT"
UBOOT_DISK_VARIABLE = "LG_BOOTSCOPE_UBOOT_DISK"
SHELL_INITRD_VARIABLE = "LG_BOOTSCOPE_SHELL_INITRD"
EXAMPLE_VARIABLES = (
    KERNEL_VARIABLE,
    INITRD_VARIABLE,
    UBOOT_VARIABLE,
    UBOOT_DISK_VARIABLE,
    SHELL_INITRD_VARIABLE,
)
# A system image built by `bootscope image build`, named by LG_BOOTSCOPE_IMAGE: its files' variables
IMAGE_VARIABLE = "LG_BOOTSCOPE_IMAGE"
IMAGE_PATHS = {
    "LG_BOOTSCOPE_IMAGE_DISK": "disk",
    "LG_BOOTSCOPE_IMAGE_KERNEL": "kernel",
    "LG_BOOTSCOPE_IMAGE_INITRD": "initrd",
}
# The U-Boot example's kernel command line (its boot script sets it)
UBOOT_CMDLINE = "console=ttyS0 panic=-1"
EXAMPLE_KERNEL = "debian:cloud"


def provide_example_paths(board: str, qemu: LocalQemu | None = None) -> list[str]:
    """Set the LG_BOOTSCOPE_* variables the environment file of ``board`` (``labgrid:ENV[:TARGET]``)
    names and the caller left unset
    (Debian's cloud kernel, bootscope's initramfs, Debian's U-Boot for QEMU and a disk it boots them
    from, the files of the system image LG_BOOTSCOPE_IMAGE names); return a note per variable set.
    Raises BootError when one cannot be fetched or built, InputError for an image not named or built."""
    text = parse_board(board).env.read_text(encoding="utf-8", errors="replace")
    notes = _image_paths([name for name in IMAGE_PATHS if _names(text, name) and name not in os.environ])
    wanted = [name for name in EXAMPLE_VARIABLES if _names(text, name) and name not in os.environ]
    if not wanted:
        return notes
    qemu = qemu or LocalQemu()
    kernel: Path | None = None
    initrd: Path | None = None
    if {KERNEL_VARIABLE, UBOOT_DISK_VARIABLE, SHELL_INITRD_VARIABLE} & set(wanted):
        kernel = _given(KERNEL_VARIABLE) or qemu.resolve_kernel(EXAMPLE_KERNEL).image
    if {INITRD_VARIABLE, UBOOT_DISK_VARIABLE} & set(wanted):
        initrd = _given(INITRD_VARIABLE) or qemu.build_initramfs((), ())
    for name in wanted:
        if name == KERNEL_VARIABLE:
            os.environ[name] = str(kernel)
            notes.append(f"{name}={kernel} ({EXAMPLE_KERNEL})")
        elif name == INITRD_VARIABLE:
            os.environ[name] = str(initrd)
            notes.append(f"{name}={initrd} (bootscope's initramfs)")
        elif name == SHELL_INITRD_VARIABLE:
            assert kernel is not None
            os.environ[name] = str(build_shell_initramfs(kernel))
            notes.append(f"{name}={os.environ[name]} (bootscope's shell initramfs, carrying {kernel.name})")
        elif name == UBOOT_VARIABLE:
            os.environ[name] = str(uboot_rom())
            notes.append(f"{name}={os.environ[name]} (Debian's {UBOOT_PACKAGE})")
        else:
            assert kernel is not None and initrd is not None
            os.environ[name] = str(boot_disk(kernel, initrd, UBOOT_CMDLINE))
            notes.append(f"{name}={os.environ[name]} (a disk U-Boot boots the kernel and initramfs from)")
    return notes


def _given(name: str) -> Path | None:
    """Return the file the environment variable ``name`` gives (None when unset); raises InputError
    when it names no file (a kernel or initramfs to build the example's files from)."""
    value = os.environ.get(name)
    if not value:
        return None
    if not Path(value).is_file():
        raise InputError(f"{name}={value}: no such file (unset it and bootscope provides one)")
    return Path(value)


def _image_paths(wanted: list[str]) -> list[str]:
    """Set the LG_BOOTSCOPE_IMAGE_* paths ``wanted`` from the image LG_BOOTSCOPE_IMAGE names; return
    a note per variable set. Raises InputError without that variable or for an image not built."""
    if not wanted:
        return []
    from bootscope.lab.qemu.image import find_image

    name = os.environ.get(IMAGE_VARIABLE)
    if not name:
        raise InputError(
            f"the environment file names {wanted[0]}: set {IMAGE_VARIABLE}=NAME (an image of"
            " `bootscope image list`) or give the disk, kernel and initramfs paths yourself"
        )
    image = find_image(name)
    for variable in wanted:
        os.environ[variable] = str(getattr(image, IMAGE_PATHS[variable]))
    return [f"{variable}={os.environ[variable]} (image {name})" for variable in wanted]


def _names(text: str, variable: str) -> bool:
    """Whether the environment file names ``variable`` (and not merely a longer name it begins)."""
    return re.search(rf"\b{variable}\b", text) is not None

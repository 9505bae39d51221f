"""The user's disk image: its format, asked of ``qemu-img``, and the QEMU options that attach it so
that no boot changes it: a virtio disk, or an emulated NVDIMM whose contents are guest memory.

Why an NVDIMM: under ``-icount`` with ``sleep=off`` the guest's clock jumps to its next timer whenever
its one vCPU idles. A guest that waits for a virtio disk read idles while a host thread serves the
read, so every host delay (a loaded host schedules that thread late) turns into guest time, and one
boot of a Debian image ran 119743 s of guest time (bench/RESULTS.md). An NVDIMM is memory: the guest
reads its file system with its own instructions, the host's page faults stop the vCPU instead of
idling it, and the guest's clock never sees the host. Its backend maps the image privately
(``share=off``), so the guest's writes stay in the QEMU process and never reach the file."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from bootscope.errors import BootError

# How a disk can be attached, and the guest's device for the whole disk under each.
DISK_ATTACHES = ("virtio", "nvdimm")
GUEST_DEVICE = {"virtio": "/dev/vda", "nvdimm": "/dev/pmem0"}
# The QEMU ids of the NVDIMM's memory backend and device.
_NVDIMM_MEMORY_ID = "bootscope-disk"
# QEMU's block drivers name formats in lower case letters and digits ("raw", "qcow2", "vmdk").
FORMAT_RE = re.compile(r"^[a-z0-9]{1,16}$")
_QEMU_IMG_TIMEOUT_S = 30.0


def disk_format(image: Path, qemu_img: str = "qemu-img") -> str:
    """Return the format of disk ``image`` ("raw", "qcow2", ...) for QEMU's ``-drive format=``.

    Asks ``qemu-img info --output=json`` when qemu-img exists (``-U``: an image another QEMU has open
    can still be inspected), else guesses from the suffix (``.qcow2``/``.qcow`` -> qcow2, else raw).
    Naming the format stops QEMU from probing a raw image's first bytes. Raises BootError if the image
    does not exist or qemu-img cannot read it.
    """
    if not image.is_file():
        raise BootError(f"no such disk image: {image}")
    if shutil.which(qemu_img) is None:
        return "qcow2" if image.suffix.lower() in (".qcow2", ".qcow") else "raw"
    try:
        done = subprocess.run(
            [qemu_img, "info", "-U", "--output=json", str(image)],
            capture_output=True,
            text=True,
            timeout=_QEMU_IMG_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BootError(f"qemu-img could not inspect disk image {image}: {error}") from error
    try:
        found = json.loads(done.stdout).get("format") if done.returncode == 0 else None
    except (ValueError, AttributeError):
        found = None
    if not isinstance(found, str) or not FORMAT_RE.match(found):
        why = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "no format reported"
        raise BootError(f"qemu-img cannot read disk image {image}: {why}")
    return found


def option_path(path: Path) -> str:
    """Return ``path`` as it goes inside a QEMU option value: commas doubled, QEMU's escape there."""
    return str(path).replace(",", ",,")


def drive_option(image: Path, image_format: str) -> str:
    """Return the ``-drive`` value attaching ``image`` as a virtio disk the guest cannot change.

    ``snapshot=on`` sends the guest's writes to a temporary overlay, so the image stays untouched.
    Commas in the path are doubled, QEMU's escape inside an option value.
    """
    return f"file={option_path(image)},if=virtio,format={image_format},snapshot=on"


def nvdimm_options(image: Path, mem_mb: int) -> list[str]:
    """Return the QEMU options that attach raw disk ``image`` as an NVDIMM beside ``mem_mb`` MiB of RAM:
    ``-m`` with one memory slot and room for the image, the PC machine's NVDIMM support, a private
    (copy-on-write) file mapping of the image, and the NVDIMM on it. The guest sees the whole disk as
    ``/dev/pmem0`` once its kernel has the ``nfit`` and ``nd_pmem`` drivers.

    Raises BootError if the image cannot be read or is empty.
    """
    try:
        size_bytes = image.stat().st_size
    except OSError as error:
        raise BootError(f"cannot read disk image {image}: {error}") from error
    if size_bytes <= 0:
        raise BootError(f"disk image {image} is empty")
    path = option_path(image)
    max_mb = mem_mb + -(-size_bytes // (1 << 20))
    return [
        "-m",
        f"{mem_mb},slots=1,maxmem={max_mb}M",
        "-machine",
        "nvdimm=on",
        "-object",
        f"memory-backend-file,id={_NVDIMM_MEMORY_ID},share=off,mem-path={path},size={size_bytes}",
        "-device",
        f"nvdimm,memdev={_NVDIMM_MEMORY_ID},id=bootscope-nvdimm",
    ]

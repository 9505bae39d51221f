"""The user's disk image: its format, asked of ``qemu-img``, and the ``-drive`` option that attaches
it so that no boot changes it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from bootscope.errors import BootError

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


def drive_option(image: Path, image_format: str) -> str:
    """Return the ``-drive`` value attaching ``image`` as a virtio disk the guest cannot change.

    ``snapshot=on`` sends the guest's writes to a temporary overlay, so the image stays untouched.
    Commas in the path are doubled, QEMU's escape inside an option value.
    """
    path = str(image).replace(",", ",,")
    return f"file={path},if=virtio,format={image_format},snapshot=on"

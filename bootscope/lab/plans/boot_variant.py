"""A boot variant and its options: the kernel, command line, machine and guest of one way of booting,
and the table of ``--variant NAME:OPTION=VALUE,...`` options (also the keys of a plan file) that
change it. The plan (:mod:`bootscope.lab.plans.boot`) holds variants; this module only describes one.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from bootscope import defaults
from bootscope.errors import InputError
from bootscope.lab.plans import variants
from bootscope.lab.plans.variants import OptionTable, whole_number
from bootscope.lab.qemu.disk import DISK_ATTACHES


@dataclass(frozen=True, slots=True)
class VariantSpec:
    """One way of booting. ``append`` is the whole extra kernel command line; ``initrd`` is the user's
    own initramfs (None: bootscope builds one that runs ``commands``, holds ``files`` (host path,
    guest path) and prints the marker); ``marker`` is the regex of the line that ends the boot;
    ``disk`` is the user's disk image (absolute path), attached read-only to the host's copy; with a
    disk and no ``initrd`` the guest boots from the disk and bootscope's initramfs is not used.
    ``image`` names a system image built by ``bootscope image build``: a full Debian boot from its
    disk, with the image's own kernel and initramfs (``kernel`` "") or ``kernel`` when it is the
    same release. ``disk_attach`` says how the disk or image is attached ("virtio" or "nvdimm", see
    lab/qemu/disk.py); None: an image under ``icount_shift`` as an NVDIMM when it can be, else virtio.
    ``on`` holds the labels of the Dask workers that may boot it (``on=host_kernel=6.12``: a host
    kernel as the variable, seed 001); empty: any worker."""

    name: str
    kernel: str
    append: str = ""
    smp: int = defaults.DEFAULT_SMP
    mem_mb: int = defaults.DEFAULT_MEM_MB
    cpu: str | None = None
    icount_shift: int | None = None
    qemu_args: tuple[str, ...] = ()
    marker: str = defaults.MARKER_PREFIX
    initrd: str | None = None
    commands: tuple[str, ...] = ()
    files: tuple[tuple[str, str], ...] = ()
    disk: str | None = None
    image: str | None = None
    disk_attach: str | None = None
    on: tuple[tuple[str, str], ...] = ()  # worker labels (KEY, VALUE) a Dask worker must carry

    def config(self) -> dict[str, Any]:
        """Return the options as a JSON-able dict (what the store keeps per variant)."""
        return {k: _jsonable(v) for k, v in asdict(self).items() if k != "name"}


def _jsonable(value: Any) -> Any:
    return [_jsonable(item) for item in value] if isinstance(value, tuple | list) else value


def _int(option: str, low: int, high: int) -> Callable[[VariantSpec, Any], dict[str, Any]]:
    field_name = {"smp": "smp", "mem": "mem_mb", "icount": "icount_shift"}[option]
    return lambda _spec, value: {field_name: whole_number(option, value, low, high)}


def _words(value: Any) -> tuple[str, ...]:
    if isinstance(value, list | tuple):
        return tuple(str(item) for item in value)
    try:
        return tuple(shlex.split(str(value)))
    except ValueError as error:
        raise InputError(f"option qemu-arg: cannot split {value!r}: {error}") from error


def _commands(value: Any) -> tuple[str, ...]:
    return tuple(str(item) for item in value) if isinstance(value, list | tuple) else (str(value),)


def _marker(_spec: VariantSpec, value: Any) -> dict[str, Any]:
    try:
        re.compile(str(value))
    except re.error as error:
        raise InputError(f"option marker: bad regex {value!r}: {error}") from error
    return {"marker": str(value)}


def _file_pairs(value: Any) -> tuple[tuple[str, str], ...]:
    """Return (absolute host path, guest path) pairs for ``HOST:GUEST`` texts; raises InputError for a
    missing host file or a guest path that is not absolute or leaves the root."""
    pairs = []
    for text in value if isinstance(value, list | tuple) else [value]:
        host, sep, guest = str(text).rpartition(":")
        if not sep or not host:
            raise InputError(f"option file: {text!r} is not HOST_PATH:GUEST_PATH")
        pure = PurePosixPath(guest)
        if not pure.is_absolute() or ".." in pure.parts or pure == PurePosixPath("/"):
            raise InputError(
                f"option file: guest path {guest!r} must be absolute without '..', e.g. /etc/x (in {text!r})"
            )
        host_path = Path(host).expanduser()
        if not host_path.is_file():
            raise InputError(f"option file: no such host file {host!r} (in {text!r})")
        pairs.append((str(host_path.resolve()), str(pure)))
    return tuple(pairs)


def _disk(_spec: VariantSpec, value: Any) -> dict[str, Any]:
    path = Path(str(value)).expanduser()
    if not path.is_file():
        raise InputError(f"option disk: no such disk image {str(value)!r}")
    return {"disk": str(path.resolve())}


def _disk_attach(_spec: VariantSpec, value: Any) -> dict[str, Any]:
    text = str(value)
    if text not in DISK_ATTACHES:
        raise InputError(f"option disk-attach: {text!r} is not one of {', '.join(DISK_ATTACHES)}")
    return {"disk_attach": text}


LABEL_RE = re.compile(r"^([A-Za-z0-9_.-]{1,64})=([A-Za-z0-9_.+:-]{1,128})$")


def worker_label(text: str, where: str) -> tuple[str, str]:
    """Return (KEY, VALUE) of a worker label ``KEY=VALUE`` (letters, digits, ``_.-`` in the key,
    also ``+:`` in the value); raises InputError naming ``where``."""
    found = LABEL_RE.match(text.strip())
    if found is None:
        raise InputError(f"{where}: {text!r} is not KEY=VALUE (e.g. host_kernel=6.12)")
    return found[1], found[2]


def labels_text(labels: tuple[tuple[str, str], ...]) -> str:
    """Worker labels as a user writes them: ``host_kernel=6.12, rack=b``."""
    return ", ".join(f"{key}={value}" for key, value in labels)


def _image(spec: VariantSpec, value: Any) -> dict[str, Any]:
    """An image variant ends at the getty's login prompt and gets more memory than an initramfs,
    unless the variant already says otherwise."""
    name = str(value)
    if not variants.NAME_RE.match(name):
        raise InputError(f"option image: bad image name {name!r}")
    changes: dict[str, Any] = {"image": name}
    if spec.marker == defaults.MARKER_PREFIX:
        changes["marker"] = defaults.LOGIN_PROMPT
    if spec.mem_mb == defaults.DEFAULT_MEM_MB:
        changes["mem_mb"] = defaults.IMAGE_MEM_MB
    return changes


# Option name (as on the command line and in plan files) -> how it changes a variant.
OPTIONS: dict[str, Callable[[VariantSpec, Any], dict[str, Any]]] = {
    "append": lambda spec, value: {"append": f"{spec.append} {value}".strip()},
    "kernel": lambda _spec, value: {"kernel": str(value)},
    "smp": _int("smp", 1, 256),
    "mem": _int("mem", 16, 1 << 20),
    "cpu": lambda _spec, value: {"cpu": str(value)},
    "icount": _int("icount", 0, 10),
    "qemu-arg": lambda spec, value: {"qemu_args": spec.qemu_args + _words(value)},
    "marker": _marker,
    "initrd": lambda _spec, value: {"initrd": str(Path(str(value)).expanduser())},
    "command": lambda spec, value: {"commands": spec.commands + _commands(value)},
    "file": lambda spec, value: {"files": spec.files + _file_pairs(value)},
    "disk": _disk,
    "disk-attach": _disk_attach,
    "image": _image,
    "on": lambda spec, value: {"on": (*spec.on, worker_label(str(value), "option on"))},
}
# Options whose value is free text in which a comma may appear (`qemu-arg=-device virtio-rng,id=r`).
BOOT_OPTIONS = OptionTable(
    OPTIONS, free_text=("append", "qemu-arg", "command", "marker", "cpu"), aliases={"qemu-args": "qemu-arg"}
)


def apply_option(spec: VariantSpec, option: str, value: Any) -> VariantSpec:
    """Return ``spec`` with one boot option applied; raises InputError naming an unknown option or a
    bad value."""
    return variants.apply_option(spec, option, value, BOOT_OPTIONS)


def parse_variant(text: str, base: VariantSpec) -> VariantSpec:
    """Return the boot variant that ``NAME:OPTION=VALUE,...`` describes, starting from ``base``
    (free text: append, qemu-arg, command, marker, cpu). Raises InputError naming the bad part."""
    return variants.parse_variant(text, base, BOOT_OPTIONS)


# Run settings as plan files (and the options of run and sweep) name them -> Plan's fields.

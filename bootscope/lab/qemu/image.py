"""Bootable Debian system images, built with debootstrap and cached by content.

``build_image`` makes a Debian tree with debootstrap (systemd, udev, initramfs-tools and the chosen
kernel package, which installs its own initramfs), adds bootscope's files
(:mod:`bootscope.lab.qemu.image_guest`), copies the kernel and initramfs out of the tree's /boot and
packs the tree into a partition-less ext4 file system image with ``mkfs.ext4 -d`` (no loop device,
no mount). An image lives in ``cache_dir()/images/store/<key>/`` (``disk.img``, ``vmlinuz``,
``initrd.img``, ``image.json``); ``<key>`` hashes everything that changes its content (suite,
packages, SSH key, size, kernel package, recipe version), so the same request is built once. A name
is a symbolic link ``images/<NAME>`` to its store entry. A build works in a temporary directory and
renames it into place at the end: a failure leaves nothing in the store.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bootscope import defaults
from bootscope.errors import BootError, InputError
from bootscope.lab.qemu.filelock import locked
from bootscope.lab.qemu.image_guest import NVDIMM_RECIPE, RECIPE_VERSION, ROOT_LABEL, write_guest_files
from bootscope.lab.qemu.image_tools import remove_tree, run_tool
from bootscope.lab.qemu.kernels import FLAVOURS

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_PACKAGE_RE = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")
_SUITE_RE = re.compile(r"^[a-z][a-z0-9-]*$")
_SIZE_RE = re.compile(r"^\s*(\d+)\s*([KMGT]?)i?B?\s*$", re.IGNORECASE)
_SIZE_FACTORS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_META_FILE = "image.json"
# What every image holds besides the kernel and the user's packages: systemd as init, udev (the
# initramfs and systemd need it for /dev/vda), and initramfs-tools, which builds the kernel's initrd.
BASE_PACKAGES = ("systemd", "systemd-sysv", "udev", "dbus", "initramfs-tools")
# Debian's tree is about 420 MB for the default image; its image file about as much again.
_MIN_FREE_BYTES = 2 << 30

Progress = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class ImageRecipe:
    """What an image holds: Debian ``suite``, extra ``packages``, root's authorized ``ssh_key`` (the
    key's text), the file system's ``size_bytes`` and the ``kernel_package`` installed with its
    initramfs."""

    suite: str = defaults.IMAGE_SUITE
    packages: tuple[str, ...] = ()
    ssh_key: str | None = None
    size_bytes: int = 2 << 30
    kernel_package: str = FLAVOURS["cloud"]

    def key(self) -> str:
        """Return the content key: a hash of everything that changes the image (16 hex digits)."""
        document = {
            "recipe": RECIPE_VERSION,
            "suite": self.suite,
            "packages": sorted(set(self.packages)),
            "ssh_key": self.ssh_key,
            "size_bytes": self.size_bytes,
            "kernel_package": self.kernel_package,
        }
        return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Image:
    """A built image: its name (None for a store entry no name points at), key, files, the kernel
    release its /boot holds, its recipe, and how long its build took (s)."""

    name: str | None
    key: str
    disk: Path
    kernel: Path
    initrd: Path
    release: str
    recipe: ImageRecipe
    build_s: float
    built_at: str
    recipe_version: int = 0

    def boots_from_nvdimm(self) -> bool:
        """Whether the image's initramfs can find its root on an NVDIMM (built by recipe 5 or later)."""
        return self.recipe_version >= NVDIMM_RECIPE


def images_dir() -> Path:
    """Return ``cache_dir()/images`` (created on demand)."""
    path = defaults.cache_dir() / "images"
    (path / "store").mkdir(parents=True, exist_ok=True)
    return path


def parse_size(text: str) -> int:
    """Return a size such as ``2G``, ``1536M`` or ``2GiB`` in bytes; raises InputError for anything
    else or a size under 256 MiB."""
    match = _SIZE_RE.match(text)
    if not match:
        raise InputError(f"--size {text!r} is not a size such as 2G or 1536M")
    size = int(match.group(1)) * _SIZE_FACTORS[match.group(2).upper()]
    if size < 256 << 20:
        raise InputError(f"--size {text!r} is too small for a Debian system (at least 256M)")
    return size


def kernel_package(spec: str) -> str:
    """Return the Debian package that ``--kernel`` names: ``debian:cloud|amd64|rt`` (the flavour's
    metapackage, so the image gets the suite's current kernel) or ``debian:linux-image-...``.
    Raises InputError for anything else (a bzImage path cannot be installed into an image)."""
    name = spec.removeprefix("debian:")
    if spec.startswith("debian:") and name in FLAVOURS:
        return FLAVOURS[name]
    if spec.startswith("debian:") and name.startswith("linux-image-") and _PACKAGE_RE.match(name):
        return name
    raise InputError(
        f"--kernel {spec!r}: use debian:cloud, debian:amd64, debian:rt or debian:linux-image-<...>"
    )


def make_recipe(
    *, suite: str, packages: tuple[str, ...], ssh_key_file: Path | None, size: str, kernel: str
) -> ImageRecipe:
    """Return the recipe the command line describes; raises InputError for a bad suite, package name,
    size, kernel or an unreadable SSH key file."""
    if not _SUITE_RE.match(suite):
        raise InputError(f"--suite {suite!r} is not a Debian suite name such as bookworm")
    for package in packages:
        if not _PACKAGE_RE.match(package):
            raise InputError(f"--packages: {package!r} is not a Debian package name")
    key: str | None = None
    if ssh_key_file is not None:
        try:
            key = ssh_key_file.expanduser().read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as error:
            raise InputError(f"--ssh-key {ssh_key_file}: cannot read it ({error})") from error
        if not key.startswith(("ssh-", "ecdsa-", "sk-")) or "\n" in key:
            raise InputError(f"--ssh-key {ssh_key_file}: not one OpenSSH public key (KEY.pub)")
    return ImageRecipe(
        suite=suite,
        packages=tuple(sorted(set(packages))),
        ssh_key=key,
        size_bytes=parse_size(size),
        kernel_package=kernel_package(kernel),
    )


def find_image(name: str) -> Image:
    """Return the image called ``name``; raises InputError if there is none."""
    _check_name(name)
    link = images_dir() / name
    image = _read_entry(link, name) if link.is_symlink() else None
    if image is None:
        raise InputError(f"no image called {name!r}: build it with `bootscope image build {name}`")
    return image


def list_images() -> list[Image]:
    """Return every named image, by name."""
    found = []
    for link in sorted(images_dir().iterdir()):
        if link.is_symlink():
            image = _read_entry(link, link.name)
            if image is not None:
                found.append(image)
    return found


def build_image(
    name: str,
    recipe: ImageRecipe,
    *,
    mirror: str = defaults.DEBIAN_MIRROR,
    rebuild: bool = False,
    progress: Progress | None = None,
) -> tuple[Image, bool]:
    """Return (the image ``recipe`` describes, whether it came from the cache), building it first
    when the store has none (or ``rebuild``), and point ``name`` at it.

    Raises InputError for a bad name; BootError, in one line, when the build cannot run or fails (not
    root, debootstrap or mkfs.ext4 missing, the mirror unreachable, an unknown package, a full disk);
    a failed build leaves nothing in the store.
    """
    _check_name(name)
    say = progress or (lambda _text: None)
    store = images_dir() / "store"
    key = recipe.key()
    entry = store / key
    with locked(store / f"{key}.lock"):
        cached = _read_entry(entry, name)
        if cached is not None and not rebuild:
            _point(name, key)
            return cached, True
        _check_can_build()
        say(f"building image {name} ({key}): debootstrap {recipe.suite} from {mirror}")
        started = time.monotonic()
        staging = Path(tempfile.mkdtemp(prefix=f".build-{key}.", dir=store))
        try:
            release = _build_into(staging, recipe, mirror, say)
            meta = {
                "key": key,
                "recipe_version": RECIPE_VERSION,
                "suite": recipe.suite,
                "packages": list(recipe.packages),
                "ssh_key": recipe.ssh_key,
                "size_bytes": recipe.size_bytes,
                "kernel_package": recipe.kernel_package,
                "release": release,
                "build_s": round(time.monotonic() - started, 3),
                "built_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }
            (staging / _META_FILE).write_text(json.dumps(meta, indent=1) + "\n")
            if entry.exists():
                shutil.rmtree(entry)  # --rebuild: the old entry goes only once the new one is whole
            os.rename(staging, entry)
        finally:
            remove_tree(staging)
        _point(name, key)
    built = _read_entry(entry, name)
    if built is None:
        raise BootError(f"image {name}: {entry} is unreadable right after its build")
    return built, False


def _build_into(staging: Path, recipe: ImageRecipe, mirror: str, say: Progress) -> str:
    """Build the tree, the kernel files and the disk in ``staging``; return the kernel release."""
    root = staging / "root"
    debs = images_dir() / "debs"
    debs.mkdir(exist_ok=True)
    packages = (*BASE_PACKAGES, recipe.kernel_package, *recipe.packages)
    run_tool(
        [
            "debootstrap",
            "--variant=minbase",
            f"--include={','.join(packages)}",
            f"--cache-dir={debs}",
            recipe.suite,
            str(root),
            mirror,
        ],
        what=f"debootstrap {recipe.suite}",
        timeout_s=defaults.IMAGE_BUILD_TIMEOUT_S,
    )
    say("debootstrap done: adding bootscope's files")
    write_guest_files(root, recipe.ssh_key, recipe.packages)
    release = _kernel_release(root)
    say(f"rebuilding the initramfs of {release} with bootscope's modules")
    run_tool(
        ["chroot", str(root), "update-initramfs", "-u", "-k", release],
        what="update-initramfs",
        timeout_s=600.0,
    )
    for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for path in (root / junk).glob("*"):
            if path.is_file():
                path.unlink()
    _copy_kernel(root, staging, release)
    say(f"kernel {release}: packing the tree into a {recipe.size_bytes >> 20} MiB ext4 image")
    disk = staging / "disk.img"
    with disk.open("wb") as handle:
        handle.truncate(recipe.size_bytes)  # sparse: only what mkfs writes takes space
    run_tool(
        ["mkfs.ext4", "-q", "-F", "-L", ROOT_LABEL, "-d", str(root), str(disk)],
        what="mkfs.ext4 -d",
        timeout_s=600.0,
    )
    remove_tree(root)
    return release


def _kernel_release(root: Path) -> str:
    """Return the release of /boot's one kernel; raises BootError unless there is exactly one."""
    kernels = sorted((root / "boot").glob("vmlinuz-*"))
    if len(kernels) != 1:
        raise BootError(f"the image's /boot holds {len(kernels)} kernels, expected one")
    return kernels[0].name.removeprefix("vmlinuz-")


def _copy_kernel(root: Path, staging: Path, release: str) -> None:
    """Copy /boot's kernel ``release`` and its initramfs to ``staging``."""
    initrd = root / "boot" / f"initrd.img-{release}"
    if not initrd.is_file():
        raise BootError(f"the image's /boot has no initrd.img-{release}: initramfs-tools did not run")
    shutil.copyfile(root / "boot" / f"vmlinuz-{release}", staging / "vmlinuz")
    shutil.copyfile(initrd, staging / "initrd.img")


def _check_can_build() -> None:
    if os.geteuid() != 0:
        raise BootError(
            "building an image needs root (debootstrap installs packages in a chroot): run as root"
        )
    for tool, package in (("debootstrap", "debootstrap"), ("mkfs.ext4", "e2fsprogs")):
        if shutil.which(tool) is None:
            raise BootError(f"{tool} not found: install Debian's {package} package")
    free = shutil.disk_usage(images_dir()).free
    if free < _MIN_FREE_BYTES:
        raise BootError(
            f"only {free >> 20} MiB free under {images_dir()}:"
            f" an image build needs about {_MIN_FREE_BYTES >> 20} MiB"
        )


def _check_name(name: str) -> None:
    if not NAME_RE.match(name) or name in ("store", "debs"):
        raise InputError(f"bad image name {name!r}: letters, digits, '.', '_', '-' (not store or debs)")


def _point(name: str, key: str) -> None:
    """Point ``images/<name>`` at the store entry ``key``, atomically."""
    link = images_dir() / name
    temporary = link.with_name(f".{name}.{os.getpid()}.link")
    if temporary.is_symlink():
        temporary.unlink()
    os.symlink(Path("store") / key, temporary)
    os.replace(temporary, link)


def _read_entry(path: Path, name: str | None) -> Image | None:
    """Return the image in store entry ``path`` (or the link to it), None if it is not whole."""
    try:
        directory = path.resolve()
        meta = json.loads((directory / _META_FILE).read_text())
        recipe = ImageRecipe(
            suite=str(meta["suite"]),
            packages=tuple(meta["packages"]),
            ssh_key=meta["ssh_key"],
            size_bytes=int(meta["size_bytes"]),
            kernel_package=str(meta["kernel_package"]),
        )
        files = [directory / part for part in ("disk.img", "vmlinuz", "initrd.img")]
        if not all(file.is_file() for file in files):
            return None
        return Image(
            name=name,
            key=str(meta["key"]),
            disk=files[0],
            kernel=files[1],
            initrd=files[2],
            release=str(meta["release"]),
            recipe=recipe,
            build_s=float(meta["build_s"]),
            built_at=str(meta["built_at"]),
            recipe_version=int(meta.get("recipe_version", 0)),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None

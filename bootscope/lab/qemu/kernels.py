"""Find or fetch a kernel to boot: a bzImage path, or a Debian package fetched into the user's cache.

Debian kernels are downloaded with ``apt-get download`` and unpacked with ``dpkg-deb -x`` into
``cache_dir()/kernels/<package>/``; nothing is ever installed on the host. A cached kernel costs no apt
call at all. Fetches hold a file lock per package, so parallel test workers share one download.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bootscope import defaults
from bootscope.errors import BootError, InputError
from bootscope.lab.qemu.filelock import locked

# Documentation/arch/x86/boot.rst: the real-mode header carries "HdrS" at 0x202 and, from protocol
# 2.00 on, a pointer (relative to 0x200) to a NUL-terminated version string at 0x20E.
_HDRS_OFFSET = 0x202
_VERSION_PTR_OFFSET = 0x20E
_HEADER_LEN = 0x400

# The flavours that `debian:<flavour>` names, each resolved through its metapackage.
FLAVOURS: dict[str, str] = {
    "cloud": "linux-image-cloud-amd64",
    "amd64": "linux-image-amd64",
    "rt": "linux-image-rt-amd64",
}
_PACKAGE_RE = re.compile(r"^linux-image-[A-Za-z0-9][A-Za-z0-9.+~-]*$")
_META_FILE = "bootscope-kernel.json"
_APT_TIMEOUT_S = 600.0


@dataclass(frozen=True, slots=True)
class KernelImage:
    """A bootable kernel: the image, an optional initrd, and what we know about where it came from."""

    image: Path
    initrd: Path | None
    release: str | None
    package: str | None
    spec: str


@dataclass(frozen=True, slots=True)
class CachedKernel:
    """A Debian kernel unpacked in the cache; ``size_bytes`` is the bzImage's size."""

    package: str
    version: str | None
    release: str | None
    image: Path
    size_bytes: int


@dataclass(frozen=True, slots=True)
class OfferedKernel:
    """What the package index offers for one flavour (the metapackage's current kernel package)."""

    flavour: str
    package: str
    version: str | None


@dataclass(frozen=True, slots=True)
class KernelListing:
    """Cached kernels, and (when asked for) what the package index offers."""

    cache_dir: Path
    cached: tuple[CachedKernel, ...]
    offered: tuple[OfferedKernel, ...]


def kernels_dir() -> Path:
    """Return ``cache_dir()/kernels`` (created on demand)."""
    path = defaults.cache_dir() / "kernels"
    path.mkdir(parents=True, exist_ok=True)
    return path


def read_image_release(image: Path) -> str | None:
    """Return the release string embedded in an x86 boot image (e.g. ``6.1.0-56-cloud-amd64``).

    Returns None when the header carries no version string. Raises BootError if the file cannot be
    read or is not an x86 boot image (no "HdrS" magic at offset 0x202).
    """
    try:
        with image.open("rb") as handle:
            header = handle.read(_HEADER_LEN)
            if len(header) < _VERSION_PTR_OFFSET + 2 or header[_HDRS_OFFSET : _HDRS_OFFSET + 4] != b"HdrS":
                raise BootError(f"{image}: not a kernel image (no x86 boot header 'HdrS' at 0x202)")
            pointer = int.from_bytes(header[_VERSION_PTR_OFFSET : _VERSION_PTR_OFFSET + 2], "little")
            if pointer == 0:
                return None
            handle.seek(0x200 + pointer)
            raw = handle.read(256).split(b"\0", 1)[0]
    except OSError as error:
        raise BootError(f"cannot read kernel {image}: {error.strerror}") from error
    words = raw.decode("ascii", errors="replace").split()
    return words[0] if words else None


def resolve_kernel(spec: str, initrd: Path | None = None, refresh: bool = False) -> KernelImage:
    """Return the kernel that ``spec`` names, fetching a Debian package into the cache if needed.

    ``spec`` is a path to a bzImage/vmlinuz, ``debian:cloud|amd64|rt`` (the kernel that the flavour's
    metapackage currently depends on) or ``debian:<exact linux-image package>``. A flavour remembered
    from an earlier resolve is reused without asking apt unless ``refresh``. Raises BootError for a
    missing file, a file that is not a kernel, an unknown package or a failed download; InputError for
    a malformed spec.
    """
    if spec.startswith("debian:"):
        return _resolve_debian(spec, spec.removeprefix("debian:"), initrd, refresh)
    path = Path(spec).expanduser()
    if not path.is_file():
        raise BootError(f"no such kernel: {spec} (give a bzImage path or debian:cloud|amd64|rt)")
    if initrd is not None and not initrd.is_file():
        raise BootError(f"no such initrd: {initrd}")
    release = read_image_release(path)
    return KernelImage(image=path.resolve(), initrd=initrd, release=release, package=None, spec=spec)


def _resolve_debian(spec: str, name: str, initrd: Path | None, refresh: bool) -> KernelImage:
    if name in FLAVOURS:
        package = None if refresh else _read_alias(name)
        if package is None or _read_meta(kernels_dir() / package) is None:
            package = _flavour_package(name)
            _write_alias(name, package)
    elif _PACKAGE_RE.match(name):
        package = name
    else:
        raise InputError(
            f"bad kernel spec {spec!r}: use debian:cloud, debian:amd64, debian:rt or debian:linux-image-<...>"
        )
    cached = fetch_package(package)
    return KernelImage(image=cached.image, initrd=initrd, release=cached.release, package=package, spec=spec)


def fetch_package(package: str) -> CachedKernel:
    """Return the cached unpacked kernel package, downloading and unpacking it first if absent.

    Holds an exclusive lock on ``<package>.lock`` while fetching. Raises BootError if apt-get or
    dpkg-deb are missing or fail, or if the package holds no ``boot/vmlinuz-*``.
    """
    if not _PACKAGE_RE.match(package):
        raise InputError(f"not a Debian kernel package name: {package!r}")
    target = kernels_dir() / package
    cached = _read_meta(target)
    if cached is not None:
        return cached
    with locked(kernels_dir() / f"{package}.lock"):
        cached = _read_meta(target)  # another process may have fetched it while we waited
        if cached is not None:
            return cached
        return _download_and_unpack(package, target)


def _download_and_unpack(package: str, target: Path) -> CachedKernel:
    for tool in ("apt-get", "dpkg-deb"):
        if shutil.which(tool) is None:
            raise BootError(f"{tool} not found: Debian kernels need apt and dpkg (or give a bzImage path)")
    if target.exists():
        shutil.rmtree(target)  # a half-finished earlier fetch: no metadata file was written
    staging = Path(tempfile.mkdtemp(prefix=f".{package}.", dir=target.parent))
    try:
        # apt-get download writes into the current directory; as root it warns that the _apt user
        # cannot write there and downloads unsandboxed, which is harmless for a plain download.
        _run(["apt-get", "download", "-q", package], cwd=staging, what=f"download {package}")
        debs = sorted(staging.glob("*.deb"))
        if len(debs) != 1:
            raise BootError(f"apt-get download {package} produced {len(debs)} .deb files, expected one")
        version = _deb_field(debs[0], "Version")
        root = staging / "root"
        _run(["dpkg-deb", "-x", str(debs[0]), str(root)], cwd=staging, what=f"unpack {debs[0].name}")
        debs[0].unlink()
        images = sorted((root / "boot").glob("vmlinuz-*"))
        if not images:
            raise BootError(f"{package} contains no boot/vmlinuz-*: not a kernel image package")
        release = images[0].name.removeprefix("vmlinuz-")
        read_image_release(images[0])  # refuses a file that is not a boot image
        meta = {
            "package": package,
            "version": version,
            "release": release,
            "image": str(images[0].relative_to(staging)),
        }
        (staging / _META_FILE).write_text(json.dumps(meta, indent=1) + "\n")
        os.replace(staging, target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    result = _read_meta(target)
    if result is None:
        raise BootError(f"cache entry {target} is unreadable after unpacking")
    return result


def _run(argv: list[str], cwd: Path, what: str) -> str:
    env = dict(os.environ, LC_ALL="C", DEBIAN_FRONTEND="noninteractive")
    try:
        done = subprocess.run(
            argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=_APT_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired as error:
        raise BootError(f"cannot {what}: {argv[0]} took longer than {_APT_TIMEOUT_S:.0f} s") from error
    if done.returncode != 0:
        errors = [
            line for line in done.stderr.splitlines() if line.startswith("E:")
        ] or done.stderr.splitlines()
        tail = errors[-1].strip() if errors else f"exit status {done.returncode}"
        raise BootError(f"cannot {what}: {tail}")
    return done.stdout


def _deb_field(deb: Path, field: str) -> str | None:
    try:
        out = _run(["dpkg-deb", "-f", str(deb), field], cwd=deb.parent, what=f"read {deb.name}")
    except BootError:
        return None
    return out.strip() or None


def _flavour_package(flavour: str) -> str:
    """Return the kernel package that the flavour's metapackage's candidate version depends on."""
    if shutil.which("apt-cache") is None:
        raise BootError("apt-cache not found: debian:<flavour> needs apt (or give a bzImage path)")
    meta = FLAVOURS[flavour]
    record = _run(["apt-cache", "show", "--no-all-versions", meta], cwd=Path("/"), what=f"look up {meta}")
    package = _depends_kernel(record)
    if package is None:
        raise BootError(f"{meta} names no linux-image package in its Depends (run apt-get update?)")
    return package


def _depends_kernel(record: str) -> str | None:
    for line in record.splitlines():
        if line.startswith("Depends:"):
            for alternative in re.split(r"[,|]", line.removeprefix("Depends:")):
                name = alternative.strip().split(" ", 1)[0]
                if _PACKAGE_RE.match(name):
                    return name
    return None


def _candidate_version(package: str) -> str | None:
    record = _run(
        ["apt-cache", "show", "--no-all-versions", package], cwd=Path("/"), what=f"look up {package}"
    )
    for line in record.splitlines():
        if line.startswith("Version:"):
            return line.removeprefix("Version:").strip()
    return None


def list_kernels(offered: bool = True) -> KernelListing:
    """Return the kernels in the cache and, if ``offered``, what the package index offers per flavour.

    Raises BootError only when ``offered`` and apt-cache is missing; a flavour that the index does not
    know is left out.
    """
    cached: list[CachedKernel] = []
    for entry in sorted(kernels_dir().iterdir()):
        meta = _read_meta(entry) if entry.is_dir() else None
        if meta is not None:
            cached.append(meta)
    offers: list[OfferedKernel] = []
    if offered:
        for flavour in FLAVOURS:
            try:
                package = _flavour_package(flavour)
                offers.append(OfferedKernel(flavour, package, _candidate_version(package)))
            except BootError:
                if shutil.which("apt-cache") is None:
                    raise
    return KernelListing(cache_dir=kernels_dir(), cached=tuple(cached), offered=tuple(offers))


def _read_meta(target: Path) -> CachedKernel | None:
    try:
        meta = json.loads((target / _META_FILE).read_text())
        image = target / str(meta["image"])
        return CachedKernel(
            package=str(meta["package"]),
            version=meta.get("version"),
            release=meta.get("release"),
            image=image,
            size_bytes=image.stat().st_size,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _read_alias(flavour: str) -> str | None:
    try:
        value = json.loads((kernels_dir() / "flavours.json").read_text()).get(flavour)
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) and _PACKAGE_RE.match(value) else None


def _write_alias(flavour: str, package: str) -> None:
    path = kernels_dir() / "flavours.json"
    with locked(kernels_dir() / "flavours.lock"):
        try:
            aliases = json.loads(path.read_text())
            if not isinstance(aliases, dict):
                aliases = {}
        except (OSError, ValueError):
            aliases = {}
        aliases[flavour] = package
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(aliases, indent=1) + "\n")
        os.replace(tmp, path)

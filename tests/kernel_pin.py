"""The one place that says which Debian kernel the tests boot, by exact package name and version.

Expected ranges in the boot tests (kernel_init_s under -icount, the init_on_free=1 step, the CPU
bring-up counts) were measured on this kernel. ``debian:cloud`` follows the index, and a warm cache
would silently keep whatever it resolved first; the pin makes the kernel a decision.

- The pinned package is used when the cache or the package index has the pinned version.
- When the index no longer offers that version, the newest ``debian:cloud`` is used and the run says so.
- ``BOOTSCOPE_OFFLINE=1``: no apt at all; the pinned kernel must be in the cache (``bootscope kernels``
  shows it; a run with network fills it), else the newest cached cloud kernel is used and the run says so.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

PINNED_PACKAGE = "linux-image-6.1.0-56-cloud-amd64"
PINNED_VERSION = "6.1.192-2"
# The PREEMPT_RT kernel of the same release, for the latency A/B (tests/lab/test_latency_qemu.py).
PINNED_RT_PACKAGE = "linux-image-6.1.0-56-rt-amd64"
PINNED_RT_VERSION = PINNED_VERSION
OFFLINE_VARIABLE = "BOOTSCOPE_OFFLINE"


class KernelPinError(Exception):
    """No usable test kernel: offline with an empty cache, or apt failed."""


def offline() -> bool:
    """True when the suite must not reach the network (``BOOTSCOPE_OFFLINE=1``)."""
    return os.environ.get(OFFLINE_VARIABLE) == "1"


def _version_cmp(left: str, right: str) -> int:
    if shutil.which("dpkg") is None:
        return (left > right) - (left < right)
    greater = subprocess.run(["dpkg", "--compare-versions", left, "gt", right], check=False).returncode == 0
    less = subprocess.run(["dpkg", "--compare-versions", left, "lt", right], check=False).returncode == 0
    return int(greater) - int(less)


def _index_has_version(package: str, version: str) -> bool:
    if shutil.which("apt-cache") is None:
        return False
    done = subprocess.run(
        ["apt-cache", "madison", package], capture_output=True, text=True, check=False, timeout=120
    )
    return any(line.split("|")[1].strip() == version for line in done.stdout.splitlines() if "|" in line)


def _newest_cached_cloud() -> tuple[Path, str] | None:
    from bootscope.lab.qemu.kernels import list_kernels

    cloud = [
        k for k in list_kernels(offered=False).cached if k.package.endswith("-cloud-amd64") and k.version
    ]
    if not cloud:
        return None
    newest = max(cloud, key=functools.cmp_to_key(lambda x, y: _version_cmp(x.version or "", y.version or "")))
    return newest.image, f"{newest.package} {newest.version}"


def pinned_cloud_kernel() -> tuple[Path, list[str]]:
    """Return the bzImage the tests boot and the messages to show (empty when the pin was honoured).

    Raises KernelPinError when offline with no cached cloud kernel; BootError from bootscope when a
    download fails.
    """
    from bootscope.lab.qemu.kernels import fetch_package, kernels_dir, list_kernels, resolve_kernel

    pinned = f"{PINNED_PACKAGE} {PINNED_VERSION}"
    cached = [
        k
        for k in list_kernels(offered=False).cached
        if k.package == PINNED_PACKAGE and k.version == PINNED_VERSION
    ]
    if cached:
        return cached[0].image, []
    if offline():
        newest = _newest_cached_cloud()
        if newest is None:
            raise KernelPinError(
                f"{OFFLINE_VARIABLE}=1 but no Debian cloud kernel is cached in {kernels_dir()}: "
                f"run the suite once with network to fetch {pinned}"
            )
        return newest[0], [
            f"test kernel: pinned {pinned} is not cached and {OFFLINE_VARIABLE}=1; using {newest[1]}"
        ]
    if _index_has_version(PINNED_PACKAGE, PINNED_VERSION):
        got = fetch_package(PINNED_PACKAGE)
        if got.version == PINNED_VERSION:
            return got.image, []
        return got.image, [f"test kernel: pinned {pinned}, but the cache holds version {got.version}"]
    newest_image = resolve_kernel("debian:cloud", refresh=True)
    return newest_image.image, [
        f"test kernel: the package index no longer offers pinned {pinned}; using the newest debian:cloud, "
        f"{newest_image.package} (update tests/kernel_pin.py after checking the expected ranges)"
    ]


def pinned_rt_kernel() -> Path:
    """Return the bzImage of the pinned PREEMPT_RT kernel, from the cache or fetched by bootscope.

    Raises KernelPinError when it is neither cached nor offered at the pinned version (no fallback:
    the latency A/B's expectations are about this kernel).
    """
    from bootscope.lab.qemu.kernels import fetch_package, list_kernels

    pinned = f"{PINNED_RT_PACKAGE} {PINNED_RT_VERSION}"
    for kernel in list_kernels(offered=False).cached:
        if kernel.package == PINNED_RT_PACKAGE and kernel.version == PINNED_RT_VERSION:
            return kernel.image
    if offline() or not _index_has_version(PINNED_RT_PACKAGE, PINNED_RT_VERSION):
        raise KernelPinError(f"pinned {pinned} is neither cached nor offered by the package index")
    got = fetch_package(PINNED_RT_PACKAGE)
    if got.version != PINNED_RT_VERSION:
        raise KernelPinError(f"pinned {pinned}, but apt fetched version {got.version}")
    return got.image


# The name under which the tests build the default system image (bootscope image build) once.
TEST_IMAGE = "bootscope-test"
# The test image serves as an SSH target too (tests/lab/test_ssh_target.py): kexec reboots, and
# latency runs over SSH (rt-tests: cyclictest, oslat, hackbench).
TEST_IMAGE_PACKAGES = ("kexec-tools", "openssh-server", "rt-tests")
# The test image's kernel, pinned like the test kernel and deliberately another release than it
# (bookworm main against bookworm security): tests/lab/test_foreign_kernel_boot.py boots the pinned
# kernel on the image as a kernel foreign to it, and the SSH tests kexec between the two.
TEST_IMAGE_KERNEL_PACKAGE = "linux-image-6.1.0-50-cloud-amd64"
assert TEST_IMAGE_KERNEL_PACKAGE != PINNED_PACKAGE, "the image's kernel must be foreign to the test kernel"

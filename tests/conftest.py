"""Shared fixtures and run-wide settings.

- The skip guard (skip_guard.py): the run fails when a test that needs a real part skipped, unless
  BOOTSCOPE_ALLOW_SKIPS=1.
- Hypothesis profiles: ``ci`` (derandomized, the default, and always under ``CI``) so that a failure
  reproduces; ``dev`` (more examples, random) with ``HYPOTHESIS_PROFILE=dev``.
- The test kernel, pinned by exact Debian package version in kernel_pin.py (BOOTSCOPE_OFFLINE=1: from
  the cache only, no apt).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings
from kernel_pin import (
    TEST_IMAGE,
    TEST_IMAGE_KERNEL_PACKAGE,
    TEST_IMAGE_PACKAGES,
    KernelPinError,
    pinned_cloud_kernel,
    pinned_rt_kernel,
)
from postgres_server import postgres_server  # noqa: F401 - the session's one server, for every test
from skip_guard import register as register_skip_guard
from ssh_keys import ssh_test_key

DATA = Path(__file__).parent / "data"
pytest_plugins = ["pytester"]  # for test_skip_guard.py

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", max_examples=1000, deadline=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config: pytest.Config) -> None:
    register_skip_guard(config)


# Fixtures that fetch a real part from the Debian archive the first time (apt-get download of a kernel
# package, a debootstrap of the test image): every test that uses one is marked ``download``, so that
# ``-m "not download"`` runs with no network and an empty cache, and no such test goes unmarked.
DOWNLOADING_FIXTURES = frozenset({"cloud_kernel", "rt_kernel", "default_image"})


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """Print the random order's seed even under -q (pytest-randomly prints it only in the header), so a
    failure that depends on the order can be run again in the same order."""
    seed = getattr(config.option, "randomly_seed", None)
    if seed is not None and config.pluginmanager.hasplugin("randomly"):
        terminalreporter.write_line(
            f"test order: random, seed {seed} (the same order again: --randomly-seed={seed})"
        )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if DOWNLOADING_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.download)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def cloud_kernel(request: pytest.FixtureRequest) -> Path:
    """The pinned Debian cloud kernel (bzImage, kernel_pin.py), fetched once into the user's cache by
    bootscope itself; a fallback to another version is shown in the run's output and as a warning."""
    try:
        image, messages = pinned_cloud_kernel()
    except KernelPinError as error:
        pytest.fail(str(error))
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    for message in messages:
        if reporter is not None:
            reporter.write_line(message, yellow=True, bold=True)
        warnings.warn(message, UserWarning, stacklevel=1)
    return image


@pytest.fixture(scope="session")
def rt_kernel() -> Path:
    """The pinned Debian PREEMPT_RT kernel (kernel_pin.py), fetched once into the user's cache."""
    try:
        return pinned_rt_kernel()
    except KernelPinError as error:
        pytest.fail(str(error))


@pytest.fixture(scope="session")
def default_image() -> object:
    """The test system image (``bootscope image build`` with openssh-server, kexec-tools, rt-tests and
    the test key, so that the SSH target tests can serve it too), built once into the user's cache by
    bootscope itself and reused while its recipe is unchanged. A machine that cannot build it (not root, no
    debootstrap, no mirror) fails the tests that need it."""
    from bootscope.lab.qemu.image import build_image, make_recipe

    key = ssh_test_key()
    recipe = make_recipe(
        suite="bookworm",
        packages=TEST_IMAGE_PACKAGES,
        ssh_key_file=key.with_suffix(".pub"),
        size="2G",
        kernel=f"debian:{TEST_IMAGE_KERNEL_PACKAGE}",
    )
    image, _cached = build_image(TEST_IMAGE, recipe)
    return image


@pytest.fixture(scope="session")
def two_workers_cluster() -> Iterator[str]:
    """The session's real local Dask cluster: two worker processes (nanny-restarted), one boot slot
    each; yields the scheduler's ``tcp://`` address."""
    from dask_cluster import local_boot_cluster

    with local_boot_cluster() as address:
        yield address


@pytest.fixture
def two_workers(two_workers_cluster: str) -> str:
    """The session's cluster with both workers connected before each test: the kill test leaves a
    nanny restarting its worker, and the next test must not depend on running after the restart."""
    from distributed import Client

    with Client(two_workers_cluster, timeout=60) as client:
        client.wait_for_workers(2, timeout=180)
    return two_workers_cluster


@pytest.fixture(scope="session")
def libvirt_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """The session's one libvirt daemon of its own (libvirt_daemon.py: Debian's libvirtd in a private
    mount namespace, nothing of the host's libvirt touched); every domain destroyed at the end."""
    from libvirt_daemon import running_daemon

    with running_daemon(tmp_path_factory.mktemp("libvirt")) as daemon:
        yield daemon

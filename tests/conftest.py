"""Shared fixtures and run-wide settings.

- The skip guard (skip_guard.py): the run fails when a test that needs a real part skipped, unless
  BOOTSCOPE_ALLOW_SKIPS=1.
- Hypothesis profiles: ``ci`` (derandomized, the default, and always under ``CI``) so that a failure
  reproduces; ``dev`` (more examples, random) with ``HYPOTHESIS_PROFILE=dev``.
- The test kernel, pinned by exact Debian package version in kernel_pin.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings
from skip_guard import register as register_skip_guard

DATA = Path(__file__).parent / "data"
pytest_plugins = ["pytester"]  # for test_skip_guard.py

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", max_examples=1000, deadline=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config: pytest.Config) -> None:
    register_skip_guard(config)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def cloud_kernel() -> Path:
    """A real Debian cloud kernel (bzImage), fetched once into the user's cache by bootscope itself."""
    from bootscope.sources.kernels import resolve_kernel

    return resolve_kernel("debian:cloud").image

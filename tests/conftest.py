"""Shared fixtures: paths to test data and a real Debian kernel to boot."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def cloud_kernel() -> Path:
    """A real Debian cloud kernel (bzImage), fetched once into the user's cache by bootscope itself."""
    from bootscope.sources.kernels import resolve_kernel

    return resolve_kernel("debian:cloud").image

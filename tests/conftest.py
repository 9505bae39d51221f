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


TEST_IMAGE = "bootscope-test"


@pytest.fixture(scope="session")
def default_image() -> object:
    """The default system image (``bootscope image build`` with no options), built once into the
    user's cache by bootscope itself and reused while its recipe is unchanged. A machine that cannot
    build it (not root, no debootstrap, no mirror) fails the tests that need it."""
    from bootscope.sources.image import build_image, make_recipe

    recipe = make_recipe(suite="bookworm", packages=(), ssh_key_file=None, size="2G", kernel="debian:cloud")
    image, _cached = build_image(TEST_IMAGE, recipe)
    return image

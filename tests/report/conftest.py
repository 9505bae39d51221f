"""Fixtures of the report tests (helpers live in report_fixtures.py, importable by name)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from report_fixtures import make_stored_run, real_views

from bootscope.usecases.view_types import BootView


@pytest.fixture(scope="session")
def smp4_view(data_dir: Path) -> BootView:
    return real_views(data_dir / "debian-6.1-cloud-initcall-smp4.log")[0]


@pytest.fixture(scope="session")
def smp1_view(data_dir: Path) -> BootView:
    return real_views(data_dir / "debian-6.1-cloud-initcall-smp1.log")[0]


@pytest.fixture
def stored_run(tmp_path: Path, smp1_view: BootView, smp4_view: BootView) -> Path:
    return make_stored_run(tmp_path, smp1_view, smp4_view)

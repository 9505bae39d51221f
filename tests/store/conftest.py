"""Store fixtures: every store test runs on a SQLite file and on a real, throwaway PostgreSQL server
(``postgres_server``, tests/postgres_server.py, shared with the other tests through tests/conftest.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from postgres_server import NO_POSTGRES, new_database

_BACKENDS = [
    "sqlite",
    pytest.param(
        "postgresql",
        marks=[
            pytest.mark.postgres,
            pytest.mark.skipif(NO_POSTGRES, reason="BOOTSCOPE_NO_POSTGRES=1"),
        ],
    ),
]


@pytest.fixture(params=_BACKENDS)
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A target for ``Store.open``: a fresh SQLite file path, or the URL of a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "bootscope.db")
    server: str = request.getfixturevalue("postgres_server")
    return new_database(server)

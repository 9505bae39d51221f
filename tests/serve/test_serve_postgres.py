"""`bootscope serve` over a real PostgreSQL store: the same pages and answers as over SQLite, and
readers answered while a run writes into the same database."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "usecases" / "watch"))
import dashboard_store
from cli_here import run_json
from postgres_server import NO_POSTGRES, new_database
from served import read_while_writing, serving
from stored_series import store_revision

from bootscope.store import Store

pytestmark = [pytest.mark.postgres, pytest.mark.skipif(NO_POSTGRES, reason="BOOTSCOPE_NO_POSTGRES=1")]


def test_serve_over_postgresql_while_a_run_writes(
    postgres_server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    db = new_database(postgres_server)
    run = dashboard_store.build(db)
    with serving(db) as url:
        assert httpx.get(url + "/api/alerts", timeout=60).json() == run_json(capsys, "alerts", "--db", db)
        for path in ("/", f"/runs/{run}", f"/runs/{run}/boots/0", "/alerts/1", "/fleet?by=kernel_series"):
            answer = httpx.get(url + path, timeout=60)
            assert answer.status_code == 200, (path, answer.text[:300])
        before = len(httpx.get(url + "/api/runs", timeout=60).json())

        def write() -> None:
            with Store.open(db) as store:
                for number in range(6):
                    store_revision(store, f"pg{number}", [1.3, 1.31, 1.32], time_s=1.9e9 + number)

        errors, listed = read_while_writing(url, ("/api/overview", "/api/runs"), 2, write)
        assert not errors, errors
        assert listed and all(before <= n <= before + 6 for n in listed)
        assert len(httpx.get(url + "/api/runs", timeout=60).json()) == before + 6

"""A store opened while another bootscope is creating it: SQLite commits each CREATE TABLE by itself,
so the tables can be there before the schema version row (seen once in CI: `bootscope kexec` creating
its store while a test polled it)."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from bootscope.errors import StoreError
from bootscope.store import Store, schema, upgrade


def _tables_without_version(path: Path) -> None:
    """Create every table of the schema in ``path`` and no version row, with plain sqlite3."""
    Store.open(str(path)).close()
    with sqlite3.connect(path) as conn:
        conn.execute(f"DELETE FROM {schema.meta.name} WHERE key = 'schema'")


def test_the_version_row_written_a_moment_later_is_waited_for(tmp_path: Path) -> None:
    path = tmp_path / "creating.db"
    _tables_without_version(path)

    def finish() -> None:
        time.sleep(0.3)
        with sqlite3.connect(path) as conn:
            conn.execute(
                f"INSERT INTO {schema.meta.name} (key, value) VALUES ('schema', ?)", (schema.SCHEMA_VERSION,)
            )

    writer = threading.Thread(target=finish)
    writer.start()
    with Store.open(str(path)) as store:
        assert store.list_experiments() == []
    writer.join()


def test_tables_that_never_get_a_version_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "cut.db"
    _tables_without_version(path)
    monkeypatch.setattr(upgrade, "CREATING_WAIT_S", 0.2)
    with pytest.raises(StoreError, match="holds bootscope's tables but no schema version"):
        Store.open(str(path))

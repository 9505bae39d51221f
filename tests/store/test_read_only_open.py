"""Opening a store to read never creates one: a --db typo is a one-line error with exit 2 and no file;
a run, or a boot, that is not there is bad input (exit 2), not a failed store (exit 4)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from bootscope.errors import StoreError, StoreLookupError
from bootscope.store import Store


def test_a_missing_file_is_not_created(tmp_path: Path) -> None:
    missing = tmp_path / "typo.db"
    with pytest.raises(StoreLookupError, match=f"no store at {missing}") as info:
        Store.open(missing, create=False)
    assert info.value.exit_code == 2
    with pytest.raises(StoreLookupError):
        Store.open(f"sqlite:///{missing}", create=False)
    assert list(tmp_path.iterdir()) == []


def test_an_empty_file_is_not_given_a_schema(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    with pytest.raises(StoreLookupError, match="empty"):
        Store.open(empty, create=False)
    assert empty.stat().st_size == 0


def test_an_existing_store_opens_and_an_unknown_run_is_bad_input(tmp_path: Path) -> None:
    db = tmp_path / "made.db"
    Store.open(db).close()  # a writer creates it
    with Store.open(db, create=False) as store:
        assert store.list_experiments() == []
        with pytest.raises(StoreLookupError, match="no experiment 3") as info:
            store.experiment(3)
        assert info.value.exit_code == 2 and isinstance(info.value, StoreError)
        with pytest.raises(StoreLookupError, match="number or 'latest'"):
            store.experiment("x")
    tables = {row[0] for row in sqlite3.connect(db).execute("select name from sqlite_master")}
    assert "experiments" in tables

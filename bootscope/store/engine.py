"""How the store reaches its database: an engine for a SQLite path or a database URL, SQLite's
pragmas (WAL), and the driver's errors in one line with advice."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from bootscope.errors import StoreError, StoreLookupError

SQLITE_BUSY_TIMEOUT_S = 15.0  # another writer (a second `bootscope run`) holds the lock this long at most


def describe_error(error: BaseException) -> str:
    """Return the driver's own message for ``error`` in one line, with advice for common causes."""
    orig = getattr(error, "orig", None) or error
    text = " ".join(str(orig).split()) or type(orig).__name__
    low = text.lower()
    if "database is locked" in low:
        return f"{text}: another process holds the database; wait for it or use another --db"
    if "disk is full" in low or "no space left" in low:
        return f"{text}: free disk space or use another --db"
    if "file is not a database" in low:
        return "the file is not a SQLite database (not a bootscope store); use another --db"
    if "unable to open database file" in low:
        return f"{text}: check that the directory exists and is writable"
    return text


def is_sqlite_file(url: sa.URL) -> bool:
    """Return whether ``url`` names a SQLite database in a file (not in memory)."""
    return url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:")


def engine_for(target: str | Path, *, create: bool = True) -> tuple[Engine, str]:
    """Return an engine for a path or URL and the name to show the user. With ``create`` False a
    SQLite file must already exist (a read-only command never makes one out of a --db typo);
    server URLs are used as given. Raises StoreLookupError (exit 2) for a missing SQLite file,
    StoreError for a bad URL or a directory where the file cannot be created."""
    text = str(target)
    if "://" in text:
        try:
            url = sa.make_url(text)
        except sa.exc.ArgumentError as error:
            raise StoreError(f"bad database URL {text!r}: {error}") from error
        shown = url.render_as_string(hide_password=True)
        if not create and is_sqlite_file(url) and not Path(str(url.database)).is_file():
            raise StoreLookupError(f"no store at {url.database} (check --db; `bootscope run` creates one)")
    else:
        path = Path(text).expanduser()
        parent = path.parent if str(path.parent) else Path(".")
        if not create and not path.is_file():
            raise StoreLookupError(f"no store at {text} (check --db; `bootscope run` creates one)")
        if not create and path.stat().st_size == 0:  # opening it in WAL mode would write a header
            raise StoreLookupError(f"no store at {text}: the file is empty (check --db)")
        if not parent.is_dir():
            raise StoreError(f"cannot create database {text}: directory {parent} does not exist")
        if not path.exists() and not os.access(parent, os.W_OK):
            raise StoreError(f"cannot create database {text}: directory {parent} is not writable")
        url = sa.URL.create("sqlite", database=str(path))
        shown = str(path)
    try:
        if url.get_backend_name() == "sqlite":
            engine = sa.create_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})
            if is_sqlite_file(url):
                sa.event.listen(engine, "connect", _sqlite_pragmas)
        else:
            engine = sa.create_engine(url, pool_pre_ping=True)
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ImportError) as error:
        raise StoreError(f"cannot use database URL {shown!r}: {describe_error(error)}") from error
    return engine, shown


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL: a reader (`bootscope runs`) never blocks the running experiment, and a SIGKILL mid-write
    # leaves the last committed boot intact. NORMAL sync is durable across process crashes in WAL.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()

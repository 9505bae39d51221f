"""The store's schema on open: create it in an empty database, upgrade an older version in place,
refuse a newer or foreign one."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from bootscope.errors import StoreError, StoreLookupError
from bootscope.store import schema

Writer = Callable[[str], AbstractContextManager[Connection]]
CREATING_WAIT_S = 5.0


def _version(engine: Engine) -> str | None:
    """The schema version the store's meta table records, None while it has none."""
    with engine.connect() as conn:
        value = conn.execute(sa.select(schema.meta.c.value).where(schema.meta.c.key == "schema")).scalar()
    return None if value is None else str(value)


def ensure_schema(engine: Engine, name: str, write: Writer, *, create: bool = True) -> None:
    """Make the database behind ``engine`` (shown to the user as ``name``) hold this bootscope's
    schema, using ``write(action)`` for a transaction; with ``create`` False an empty database is
    refused rather than given the schema (an older schema is still upgraded). Raises StoreError for
    another schema version that cannot be upgraded, a database with other tables, or a failed
    write; StoreLookupError for an empty database when ``create`` is False."""
    tables = set(sa.inspect(engine).get_table_names())
    if schema.meta.name in tables:
        version = _version(engine)
        # SQLite commits each CREATE TABLE by itself, so another bootscope creating this store can
        # show its tables before its version row: give it CREATING_WAIT_S to finish.
        deadline_s = time.monotonic() + CREATING_WAIT_S
        while version is None and time.monotonic() < deadline_s:
            time.sleep(0.05)
            version = _version(engine)
        if version is None:
            raise StoreError(
                f"{name} holds bootscope's tables but no schema version (a store whose creation was"
                " cut short); use another --db"
            )
        if version in schema.MIGRATIONS:
            _migrate(str(version), write)
            return
        if version != schema.SCHEMA_VERSION:
            raise StoreError(
                f"{name} has bootscope schema {version}, this bootscope reads "
                f"{schema.SCHEMA_VERSION}; use another --db"
            )
        return
    if tables:
        raise StoreError(f"{name} is not a bootscope database (other tables); use another --db")
    if not create:
        raise StoreLookupError(f"no store at {name}: the database is empty (check --db)")
    try:
        with write("creating the schema in") as conn:
            schema.metadata.create_all(conn)
            conn.execute(sa.insert(schema.meta).values(key="schema", value=schema.SCHEMA_VERSION))
    except StoreError:
        # Two processes opened the same new file at once (a run and `bootscope runs`): the other
        # one created the schema (its version row may follow its tables: see above); check its version.
        if schema.meta.name not in set(sa.inspect(engine).get_table_names()):
            raise
        ensure_schema(engine, name, write, create=create)


def _migrate(version: str, write: Writer) -> None:
    with write(f"upgrading schema {version} of") as conn:
        while version in schema.MIGRATIONS:
            for statement in schema.MIGRATIONS[version]:
                conn.execute(sa.text(statement))
            inspector = sa.inspect(conn)
            for table, column, definition in schema.COLUMN_ADDITIONS.get(version, ()):
                present = table in inspector.get_table_names()
                if present and column not in {c["name"] for c in inspector.get_columns(table)}:
                    conn.execute(sa.text(f"ALTER TABLE {table} ADD COLUMN {column} {definition}"))
            new_tables = [schema.metadata.tables[name] for name in schema.NEW_TABLES.get(version, ())]
            if new_tables:
                schema.metadata.create_all(conn, tables=new_tables)
            version = str(int(version) + 1)
        conn.execute(sa.update(schema.meta).where(schema.meta.c.key == "schema").values(value=version))

"""A real, throwaway PostgreSQL server for the tests that need one (the store's, the server's).

The server is Debian's postgresql (installed by scripts/setup.sh), started once per session in a temp
directory on a free port of 127.0.0.1 and stopped at the end. Missing server binaries fail the
PostgreSQL tests. BOOTSCOPE_NO_POSTGRES=1 leaves them out as skips, which the skip guard
(tests/skip_guard.py) still counts as a failure unless BOOTSCOPE_ALLOW_SKIPS=1 is set as well.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

NO_POSTGRES = os.environ.get("BOOTSCOPE_NO_POSTGRES") == "1"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_postgres(args: list[str]) -> list[str]:
    # initdb refuses to run as root; as root we run the server binaries as the postgres user.
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """Yield a SQLAlchemy URL prefix ``postgresql+psycopg://USER@127.0.0.1:PORT`` of a fresh server."""
    initdbs = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not initdbs:
        pytest.fail(
            "PostgreSQL server binaries are missing: run scripts/setup.sh "
            "(or BOOTSCOPE_NO_POSTGRES=1 BOOTSCOPE_ALLOW_SKIPS=1)"
        )
    bindir = Path(initdbs[-1]).parent
    root = Path(tempfile.mkdtemp(prefix="bootscope-pg-"))
    data, sockets, log = root / "data", root / "sock", root / "server.log"
    sockets.mkdir()
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
        shutil.chown(sockets, "postgres")
    user = "postgres" if os.geteuid() == 0 else os.environ.get("USER", "postgres")
    port = _free_port()
    subprocess.run(
        _as_postgres([str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", user, "-E", "UTF8"]),
        check=True,
        capture_output=True,
    )
    options = f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off"
    pg_ctl = str(bindir / "pg_ctl")
    subprocess.run(
        _as_postgres([pg_ctl, "-D", str(data), "-o", options, "-l", str(log), "-w", "-t", "60", "start"]),
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql+psycopg://{user}@127.0.0.1:{port}"
    finally:
        subprocess.run(
            _as_postgres([pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"]), capture_output=True
        )
        shutil.rmtree(root, ignore_errors=True)


def new_database(server: str) -> str:
    """Create a fresh database on ``server`` and return its URL."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:12]
    plain = server.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain + "/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{server}/{name}"

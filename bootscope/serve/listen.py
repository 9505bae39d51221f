"""Binding and running the server: the socket bound first (a port in use is a one-line error, and
port 0 picks a free one), the URL printed, uvicorn serving until Ctrl-C or SIGTERM."""

from __future__ import annotations

import ipaddress
import os
import secrets
import socket
import stat
import sys
from pathlib import Path

from bootscope.errors import InputError
from bootscope.serve.app import guarded_app
from bootscope.serve.context import Served

MIN_TOKEN_CHARS = 16


def is_loopback(host: str) -> bool:
    """True for a loopback address or ``localhost``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_token(path: Path) -> tuple[str, bool]:
    """Return the write token in ``path`` and whether it was made now: a file that does not exist is
    created (mode 600) with a new random token. Raises InputError for an unreadable file or a token
    shorter than ``MIN_TOKEN_CHARS``."""
    if not path.exists():
        token = secrets.token_urlsafe(32)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
            with os.fdopen(fd, "w") as out:
                out.write(token + "\n")
        except OSError as error:
            raise InputError(f"--token-file {path}: cannot create it ({error.strerror})") from None
        return token, True
    try:
        token = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"--token-file {path}: cannot read it ({error})") from None
    if len(token) < MIN_TOKEN_CHARS:
        raise InputError(f"--token-file {path}: the token needs at least {MIN_TOKEN_CHARS} characters")
    return token, False


def bind(host: str, port: int) -> socket.socket:
    """Return a listening socket on ``host``:``port`` (0: a free port). Raises InputError when the
    address cannot be bound (in use, not this machine's, no permission)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise InputError(f"--host {host}: {error.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError as error:
        sock.close()
        raise InputError(f"cannot listen on {host}:{port}: {error.strerror}") from None
    sock.set_inheritable(True)
    return sock


def url_of(sock: socket.socket) -> str:
    """Return the http URL a bound socket answers on."""
    host, port = sock.getsockname()[:2]
    return f"http://{f'[{host}]' if ':' in host else host}:{port}/"


def serve(served: Served, host: str, port: int) -> None:
    """Serve the dashboard on ``host``:``port`` until interrupted; prints the URL on stdout first.
    Raises InputError when the address cannot be bound."""
    import uvicorn

    loopback = is_loopback(host)
    sock = bind(host, port)
    app = guarded_app(served, loopback_only=loopback)
    config = uvicorn.Config(app, log_level="warning", access_log=False, server_header=False, lifespan="off")
    print(f"serving {url_of(sock)}", flush=True)
    if not loopback:
        print(
            f"bootscope serve: listening beyond this machine on {host}: anyone who reaches it"
            " can read the store",
            file=sys.stderr,
            flush=True,
        )
    uvicorn.Server(config).run(sockets=[sock])

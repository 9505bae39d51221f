"""What every request meets before a handler: the Host header checked (a server on loopback answers
only to loopback names, so a web page elsewhere cannot reach it through DNS rebinding), the path,
query and body bounded, and the security headers set on every answer (a Content-Security-Policy that
allows scripts from the server itself only, no framing, no sniffing, no referrer)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_PATH_BYTES = 1024
MAX_QUERY_BYTES = 2048
MAX_BODY_BYTES = 16 * 1024
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})

SECURITY_HEADERS = (
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
        b"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-resource-policy", b"same-origin"),
)


def host_name(header: str) -> str:
    """Return the host of a Host header without its port (``[::1]:8080`` -> ``[::1]``)."""
    if header.startswith("["):
        return header.split("]", 1)[0] + "]"
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


async def _plain(send: Send, status: int, text: str) -> None:
    body = (text + "\n").encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": [*headers, *SECURITY_HEADERS]})
    await send({"type": "http.response.body", "body": body})


class Guard:
    """ASGI middleware: refuses a request for another host (400), a long path or query (414), a body
    over ``MAX_BODY_BYTES`` (413), and adds ``SECURITY_HEADERS`` to every answer."""

    def __init__(self, app: App, allowed_hosts: frozenset[str] | None) -> None:
        """``allowed_hosts``: the Host names answered (None: any, for a server bound to a network)."""
        self.app = app
        self.allowed_hosts = allowed_hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check one request, then hand it on with its answer's headers completed."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        host = host_name(headers.get(b"host", b"").decode("latin-1"))
        if self.allowed_hosts is not None and host.lower() not in self.allowed_hosts:
            await _plain(send, 400, "this server answers on its loopback address only")
            return
        if len(scope.get("raw_path") or scope["path"].encode()) > MAX_PATH_BYTES:
            await _plain(send, 414, "path too long")
            return
        if len(scope.get("query_string", b"")) > MAX_QUERY_BYTES:
            await _plain(send, 414, f"query too long (at most {MAX_QUERY_BYTES} bytes)")
            return
        length = headers.get(b"content-length", b"0")
        if not length.isdigit() or int(length) > MAX_BODY_BYTES:
            await _plain(send, 413, f"request body too large (at most {MAX_BODY_BYTES} bytes)")
            return
        received = 0

        async def bounded_receive() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > MAX_BODY_BYTES:
                raise ValueError("request body larger than its Content-Length")
            return message

        async def secured_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, bounded_receive, secured_send)

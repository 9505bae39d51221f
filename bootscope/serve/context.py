"""What every handler of one server shares: the store, the write token, and the errors' answers."""

from __future__ import annotations

import hmac
import json
import math
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from bootscope.errors import BootscopeError, InputError, StoreLookupError
from bootscope.report.text_cells import clean

# Ids the store can hold (a larger number is no run and no alert: 404, never a database error).
MAX_ID = 2**31 - 1
MAX_PARAM_CHARS = 200
TOKEN_HEADER = "x-bootscope-token"


@dataclass(frozen=True, slots=True)
class Served:
    """One server's settings: the store (a path or URL), the write token (None: read-only), the
    significance level of its intervals and comparisons."""

    db: str
    token: str | None
    alpha: float


def param(request: Request, name: str, default: str = "", limit: int = MAX_PARAM_CHARS) -> str:
    """Return query parameter ``name`` (``default`` when absent); raises InputError past ``limit``
    characters or for a control character."""
    value = request.query_params.get(name, default)
    if len(value) > limit or any(not ch.isprintable() for ch in value):
        raise InputError(f"{name}: at most {limit} printable characters")
    return value


def path_id(request: Request, name: str) -> int:
    """Return the integer path parameter ``name``; raises StoreLookupError past ``MAX_ID``."""
    value = int(request.path_params[name])
    if value > MAX_ID:
        raise StoreLookupError(f"no {name} {value}")
    return value


def status_of(error: BootscopeError) -> int:
    """Return the HTTP status of a bootscope error: 404 for something not there, 400 for bad input,
    503 for a store that cannot be read."""
    if isinstance(error, StoreLookupError):
        return 404
    return 400 if isinstance(error, InputError) or error.exit_code == 2 else 503


def token_ok(served: Served, request: Request) -> bool:
    """True when the request carries the server's token in its header (compared in constant time)."""
    given = request.headers.get(TOKEN_HEADER, "")
    return served.token is not None and hmac.compare_digest(given.encode(), served.token.encode())


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def answer_json(document: Any, status: int = 200) -> Response:
    """Return ``document`` as a JSON answer (a NaN or infinity as null: JSON has neither)."""
    text = json.dumps(_finite(document), allow_nan=False)
    return Response(text, status_code=status, media_type="application/json")


def failure(request: Request, error: Exception, *, as_json: bool) -> Response:
    """Return the answer to a handler's ``error``: a bootscope error as its one line (JSON
    ``{"error"}`` or a small page) with the status :func:`status_of` gives, any other as a 500 that
    names no internals (its one line goes to the server's stderr)."""
    if isinstance(error, BootscopeError):
        status, text = status_of(error), clean(str(error), 400)
    else:
        print(f"bootscope serve: {request.url.path}: {type(error).__name__}: {error}", file=sys.stderr)
        status, text = 500, "internal error: the server's log says more"
    if as_json:
        return JSONResponse({"error": text}, status_code=status)
    from bootscope.report.web_layout import error_page

    return HTMLResponse(error_page(status, text), status_code=status)


def guarded(handler: Callable[[Request], Response], *, as_json: bool) -> Callable[[Request], Response]:
    """Return ``handler`` (run in a worker thread: the use cases block) answering its errors with
    :func:`failure`."""

    def wrapped(request: Request) -> Response:
        try:
            return handler(request)
        except Exception as error:
            return failure(request, error, as_json=as_json)

    return wrapped


def guarded_async(
    handler: Callable[[Request], Awaitable[Response]], *, as_json: bool
) -> Callable[[Request], Awaitable[Response]]:
    """Return the coroutine ``handler`` answering its errors with :func:`failure`."""

    async def wrapped(request: Request) -> Response:
        try:
            return await handler(request)
        except Exception as error:
            return failure(request, error, as_json=as_json)

    return wrapped

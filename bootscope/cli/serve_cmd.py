"""``bootscope serve``: the store as a web dashboard."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bootscope import defaults
from bootscope.cli import options


def serve(
    db: options.Db = defaults.DEFAULT_DB,
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on (default loopback: this machine only).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port (0: a free one; the URL is printed).")] = 8080,
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            help="File holding the token that writes (triage) need in a header; created with a new"
            " token when missing. Without it the server is read-only.",
        ),
    ] = None,
) -> None:
    """Serve the store as a dashboard: series and alerts, runs, boots, comparisons and the fleet,
    each page with its JSON under /api/. Reading needs nothing; triage needs the token."""
    from bootscope.errors import InputError
    from bootscope.serve.context import Served
    from bootscope.serve.listen import read_token
    from bootscope.serve.listen import serve as run_server
    from bootscope.store import Store

    if not 0 <= port <= 65535:
        raise InputError(f"--port {port}: from 0 to 65535")
    token = None
    if token_file is not None:
        token, made = read_token(token_file)
        if made:
            from bootscope.report.console import error_console

            error_console().print(f"wrote a new token to {token_file} (mode 600)", markup=False)
    shown = db if "://" in db else str(Path(db).resolve())
    with Store.open(db, create=False):
        pass  # a store that is not there, or not bootscope's, is refused now, not on the first page
    run_server(Served(db=shown, token=token, alpha=defaults.ALPHA), host, port)

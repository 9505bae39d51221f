"""``bootscope worker SCHEDULER``: a Dask worker that boots the slots of ``--executor dask://`` runs."""

from __future__ import annotations

import sys
from typing import Annotated

import typer


def worker(
    scheduler: Annotated[str, typer.Argument(help="The Dask scheduler: dask://HOST:PORT (or HOST:PORT).")],
    slots: Annotated[
        int, typer.Option("--slots", min=1, help="Boots run at once here (the worker's 'boot' resource).")
    ] = 1,
    cores: Annotated[
        str | None,
        typer.Option(
            "--cores",
            help="Host CPUs for this worker and its guests, e.g. 0,1 or 2-3 (default: all it may use);"
            " each boot is pinned to cores of its own among them.",
        ),
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="Worker name shown by Dask.")] = None,
    label: Annotated[
        list[str] | None,
        typer.Option(
            "--label",
            help="KEY=VALUE this worker carries, e.g. host_kernel=6.12 (repeatable); a variant with"
            " on=KEY=VALUE runs only on workers carrying it.",
        ),
    ] = None,
) -> None:
    """Serve boots to `--executor dask://` runs until Ctrl-C; joins the scheduler again when it
    comes back. Needs QEMU and bootscope here, no database. Exit status 2 for bad options."""
    from bootscope.usecases.worker import serve_worker

    serve_worker(scheduler, slots, cores, name, _say, tuple(label or ()))


def _say(line: str) -> None:
    # Plain and flushed: a worker's stderr is often a log file that someone tails.
    print(f"bootscope worker: {line}", file=sys.stderr, flush=True)

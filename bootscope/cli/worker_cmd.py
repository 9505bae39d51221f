"""``bootscope worker SCHEDULER``: a Dask worker that boots the slots of ``--executor dask://`` runs."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from bootscope.errors import InputError


def _cores(text: str | None) -> tuple[int, ...] | None:
    """Return the CPU ids of ``--cores`` (``0,1`` or ``2-3``), None if not given; raises InputError."""
    if text is None:
        return None
    cores: list[int] = []
    try:
        for part in text.split(","):
            low, _, high = part.strip().partition("-")
            cores += range(int(low), int(high or low) + 1)
    except ValueError:
        raise InputError(f"--cores takes CPU ids such as 0,1 or 2-3, not {text!r}") from None
    if not cores or min(cores) < 0:
        raise InputError(f"--cores takes CPU ids such as 0,1 or 2-3, not {text!r}")
    return tuple(sorted(set(cores)))


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
) -> None:
    """Serve boots to `--executor dask://` runs until Ctrl-C; joins the scheduler again when it
    comes back. Needs QEMU and bootscope here, no database. Exit status 2 for bad options."""
    from bootscope.lab.executors.dask import scheduler_address
    from bootscope.lab.executors.dask_worker import serve

    address = scheduler_address(scheduler)
    chosen = _cores(cores)
    usable = len(chosen or os.sched_getaffinity(0))
    if slots > usable:
        _say(f"note: {slots} slots on {usable} cores: guests will share cores")
    serve(address, slots, chosen, name, _say)


def _say(line: str) -> None:
    # Plain and flushed: a worker's stderr is often a log file that someone tails.
    print(f"bootscope worker: {line}", file=sys.stderr, flush=True)

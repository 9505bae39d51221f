"""The worker use case: serve the boot slots of ``--executor dask://`` runs from this host
(``bootscope worker``)."""

from __future__ import annotations

import os
from collections.abc import Callable

from bootscope.errors import InputError


def parse_cores(text: str | None) -> tuple[int, ...] | None:
    """Return the CPU ids of ``--cores`` (``0,1`` or ``2-3``), sorted and once each; None if not
    given. Raises InputError for anything else."""
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


def serve_worker(
    scheduler: str,
    slots: int,
    cores: str | None,
    name: str | None,
    say: Callable[[str], None],
    labels: tuple[str, ...] = (),
) -> None:
    """Serve ``slots`` boots at once to the Dask scheduler ``scheduler`` (``dask://HOST:PORT`` or
    ``HOST:PORT``) until Ctrl-C, on the host CPUs ``cores`` names (``0,1`` or ``2-3``; None: all this
    process may use) under the worker name ``name``; ``say`` gets one line per event (a note when
    there are more slots than cores); ``labels`` (``KEY=VALUE``, e.g. ``host_kernel=6.12``) are what
    variants pinned with ``on=KEY=VALUE`` need. Raises InputError for a bad address, --cores or
    --label, and as :func:`bootscope.lab.executors.dask_worker.serve` does."""
    # Imported here: distributed is a heavy import.
    from bootscope.lab.executors.dask import scheduler_address
    from bootscope.lab.executors.dask_worker import serve
    from bootscope.lab.plans.boot_variant import worker_label

    address = scheduler_address(scheduler)
    chosen = parse_cores(cores)
    pairs = tuple(worker_label(text, "--label") for text in labels)
    usable = len(chosen or os.sched_getaffinity(0))
    if slots > usable:
        say(f"note: {slots} slots on {usable} cores: guests will share cores")
    serve(address, slots, chosen, name, say, pairs)

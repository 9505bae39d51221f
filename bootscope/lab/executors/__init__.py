"""Executors: where the runner's slots are measured.

:class:`~bootscope.lab.executors.local.LocalThreads` runs them on this host (the runner's default);
:mod:`bootscope.lab.executors.dask` on Dask workers (:mod:`~bootscope.lab.executors.dask_worker`, which
measure with :mod:`~bootscope.lab.executors.remote`). :func:`open_executor` picks one from
``--executor``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from bootscope.errors import InputError
from bootscope.lab.executors.local import Executor

LOCAL = "local"


@contextlib.contextmanager
def open_executor(spec: str | None, jobs: int | None = None) -> Iterator[Executor | None]:
    """Yield the executor ``--executor`` names: None (this host's threads, the runner's default) for
    no value or ``local``, a connected Dask executor for ``dask://HOST:PORT`` (closed when the block
    ends). Raises InputError for another value or ``-j`` above 1 with Dask (a worker's slots are its
    ``bootscope worker --slots``), BootError when the scheduler or its workers cannot be reached."""
    if spec is None or spec.strip() == LOCAL:
        yield None
        return
    if not spec.strip().startswith("dask://"):
        raise InputError(f"--executor {spec}: give {LOCAL} or dask://HOST:PORT")
    if jobs is not None and jobs > 1:
        raise InputError(
            "-j applies to local runs; with Dask each worker's --slots says how many boots it runs"
        )
    # Imported here: distributed is a heavy import that local runs never need.
    from bootscope.lab.executors.dask import dask_executor

    with dask_executor(spec) as executor:
        yield executor

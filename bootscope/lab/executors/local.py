"""Executors: where the runner's slots are measured.

The runner (:mod:`bootscope.lab.runner`) keeps the schedule, warm-ups, the stopping rule and the
store; an executor measures batches of slots. :class:`LocalThreads` runs them on this host, one at
a time or ``-j`` at once in threads, each guest pinned to its own cores; a remote executor (Dask:
:mod:`bootscope.lab.executors.dask`) measures each slot on a worker and hands its records back to the
loop, which stores them here.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from queue import Queue
from typing import TYPE_CHECKING, Any, Protocol

from bootscope.errors import InputError
from bootscope.lab.plans.boot_variant import labels_text
from bootscope.lab.plans.schedule import Slot
from bootscope.lab.qemu.accel import AccelChoice
from bootscope.lab.targets.base import Target
from bootscope.lab.workloads.protocol import Workload

if TYPE_CHECKING:  # the runner imports this module for its default executor
    from bootscope.lab.slots import SlotLoop


class Executor(Protocol):
    """Where a run's slots are measured. The runner keeps the schedule, warm-ups, stopping rule and
    the store; an executor chooses the accelerator and prepares the workload where the guests will
    run, and measures batches of slots, every record reaching the store through the loop."""

    def choose_accel(self, workload: Workload, target: Target, requested: str, reprobe: bool) -> AccelChoice:
        """Return the accelerator for ``requested`` where the guests run, and why."""

    def prepare(self, workload: Workload, target: Target, accel: str) -> list[str]:
        """Resolve kernels and build images where the guests run; return notes. Raises
        BootError/InputError before anything is stored."""

    def host_info(self, target: Target) -> dict[str, Any]:
        """Return the JSON-able description of where the experiment runs (stored with it)."""

    def slots_at_once(self, jobs: int) -> int:
        """Return how many slots run at once (``jobs`` is ``-j``)."""

    def run_batch(
        self,
        loop: SlotLoop,
        slots: Sequence[Slot],
        next_attempt: dict[int, int],
        cores: Sequence[tuple[int, ...] | None],
    ) -> None:
        """Measure ``slots`` (each from attempt ``next_attempt.get(index, 0)``), every record stored
        through ``loop`` as it arrives; raise (after stopping what runs) to interrupt the run."""


class LocalThreads:
    """Slots on this host: one at a time, or ``-j`` at once in threads, each guest pinned to ``cores``."""

    def choose_accel(self, workload: Workload, target: Target, requested: str, reprobe: bool) -> AccelChoice:
        """Return the workload's choice on ``target`` (refusing, first, a variant pinned to a worker
        label, as :meth:`prepare` does)."""
        _refuse_labels(workload)
        return workload.choose_accel(target, requested, reprobe)

    def prepare(self, workload: Workload, target: Target, accel: str) -> list[str]:
        """Prepare the workload on ``target``. Raises InputError for a variant pinned to a worker
        label: only the Dask executor has labelled workers."""
        _refuse_labels(workload)
        return workload.prepare(target, accel)

    def host_info(self, target: Target) -> dict[str, Any]:
        """Return ``target``'s description."""
        return target.host_info()

    def slots_at_once(self, jobs: int) -> int:
        """``-j`` slots at once."""
        return jobs

    def run_batch(
        self,
        loop: SlotLoop,
        slots: Sequence[Slot],
        next_attempt: dict[int, int],
        cores: Sequence[tuple[int, ...] | None],
    ) -> None:
        """Run ``slots`` here, in order or ``-j`` at once."""
        if loop.workload.settings.jobs == 1:
            for slot in slots:
                loop.run_slot(slot, next_attempt.get(slot.index, 0), None)
            return
        _run_threads(loop, slots, next_attempt, cores)


def _run_threads(
    loop: SlotLoop,
    slots: Sequence[Slot],
    next_attempt: dict[int, int],
    cores: Sequence[tuple[int, ...] | None],
) -> None:
    free: Queue[tuple[int, ...] | None] = Queue()
    for core_set in cores:
        free.put(core_set)

    def job(slot: Slot) -> None:
        core_set = free.get()
        try:
            loop.run_slot(slot, next_attempt.get(slot.index, 0), core_set)
        finally:
            free.put(core_set)

    pool = ThreadPoolExecutor(max_workers=loop.workload.settings.jobs, thread_name_prefix="bootscope-slot")
    futures: list[Future[None]] = [pool.submit(job, slot) for slot in slots]
    try:
        finished, _ = wait(futures, return_when=FIRST_EXCEPTION)
        for future in finished:
            future.result()  # re-raise a worker's error here
    except BaseException:
        loop.kill_running()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _refuse_labels(workload: Workload) -> None:
    """Raise InputError for a variant pinned to a worker label (only Dask workers carry labels)."""
    for variant in workload.variants:
        labels = workload.worker_labels(variant)
        if labels:
            named = labels_text(labels)
            raise InputError(
                f"variant {variant} runs on a worker labelled {named}: give --executor dask://HOST:PORT"
                " with workers started as bootscope worker --label KEY=VALUE"
            )

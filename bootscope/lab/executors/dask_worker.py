"""The worker side of a Dask run: the tasks a worker runs, the state it keeps, and ``bootscope worker``.

A worker declares ``RESOURCE`` (``boot``) slots; the client asks one slot per measurement, so Dask
never runs more boots on a worker than it declared. Each worker keeps (in :class:`SlotPlugin`) the
workloads it prepared (kernels resolved and initramfs images built on its own host, once per plan)
and a pool of core sets: every guest is pinned to cores of its own, taken from the worker process's
CPU affinity as ``-j`` does locally, so two workers on one host (``--cores``) never share a core.
A task returns the slot's records and console lines; the worker never opens a database.

Imported only by Dask runs and ``bootscope worker``: ``distributed`` is a heavy import.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from queue import Queue
from typing import Any

from distributed import Worker, get_worker
from distributed.diagnostics.plugin import WorkerPlugin

from bootscope.errors import BootscopeError
from bootscope.lab.executors.remote import MeasuredSlot, measure_slot
from bootscope.lab.hostinfo import measuring_host
from bootscope.lab.plans.schedule import Slot
from bootscope.lab.qemu.accel import AccelChoice
from bootscope.lab.slots import core_sets
from bootscope.lab.targets import target_for
from bootscope.lab.targets.base import Target, require
from bootscope.lab.workloads import workload_from_document
from bootscope.lab.workloads.protocol import Workload

RESOURCE = "boot"  # the Dask resource one measurement takes: a worker's --slots
PLUGIN_NAME = "bootscope-slots"
LABEL_PREFIX = "label:"  # a worker's --label KEY=VALUE is the Dask resource "label:KEY=VALUE"
RECONNECT_S = 2.0  # `bootscope worker`: pause before joining a scheduler again after losing it
PREPARED_KEPT = 8  # plans a worker keeps prepared (one per running experiment, a few old ones)

TargetFactory = Callable[[], Target]


@dataclass(frozen=True, slots=True)
class SlotJob:
    """One measurement as the client sends it: the experiment's plan (``document``) and accelerator,
    the slot and its attempt number, and how to make the target on the worker (``LocalQemu`` for real
    runs; it is pickled by reference, so the worker needs bootscope installed)."""

    document: Mapping[str, Any]
    accel: str
    slot: Slot
    attempt: int
    target_factory: TargetFactory


class SlotPlugin(WorkerPlugin):
    """Per-worker state: prepared workloads and the pool of free core sets (per guest vCPU count)."""

    name = PLUGIN_NAME
    idempotent = True  # registering it again (every run's client does) keeps what was prepared

    def setup(self, worker: Worker) -> None:
        """Read the worker's slots and address; nothing is prepared before the first task."""
        self.address = str(worker.address)
        self.slots = max(1, int(worker.state.total_resources.get(RESOURCE, 1)))
        offered = worker.state.total_resources
        labels = dict(label_of(name) for name in offered if name.startswith(LABEL_PREFIX))
        self.placement: dict[str, Any] = {"worker": self.address, **measuring_host()}
        if labels:
            self.placement["labels"] = labels
        self.lock = threading.Lock()
        self.prepared: dict[str, tuple[Workload, Target, list[str]]] = {}
        self.free: dict[int, Queue[tuple[int, ...] | None]] = {}

    def prepare(
        self, document: Mapping[str, Any], accel: str, target_factory: TargetFactory
    ) -> tuple[Workload, Target, list[str]]:
        """Return the workload of ``document`` prepared here for ``accel``, its target and the notes
        of preparing it (done once per plan, accelerator and target); raises BootError/InputError."""
        key = f"{json.dumps(document, sort_keys=True, default=str)}|{accel}|{target_factory!r}"
        with self.lock:  # one preparation at a time: they build the same cached files
            if key not in self.prepared:
                workload = workload_from_document(document)
                target = worker_target(workload, target_factory)
                notes = workload.prepare(target, accel)
                if len(self.prepared) >= PREPARED_KEPT:
                    self.prepared.pop(next(iter(self.prepared)))
                self.prepared[key] = (workload, target, notes)
            return self.prepared[key]

    def measure(self, job: SlotJob) -> MeasuredSlot:
        """Measure ``job``'s slot here, its guest pinned to a free core set of this worker."""
        workload, target, _notes = self.prepare(job.document, job.accel, job.target_factory)
        notes: list[str] = []
        with self.lock:
            smp = workload.max_smp
            if smp not in self.free:
                self.free[smp] = Queue()
                for core_set in core_sets(self.slots, smp, notes.append, always=True):
                    self.free[smp].put(core_set)
        cores = self.free[smp].get()
        try:
            measured = measure_slot(workload, target, job.accel, job.slot, job.attempt, cores, self.placement)
        finally:
            self.free[smp].put(cores)
        return MeasuredSlot(measured.slot, measured.records, (*notes, *measured.notes), self.address)


def worker_target(workload: Workload, target_factory: TargetFactory) -> Target:
    """Return the target ``workload`` runs on here: the plan's place (this worker's host for a local
    latency run) or the factory's target; raises InputError when it lacks what the workload needs."""
    target = target_for(workload.where(), target_factory())
    require(target, workload.needs, workload.kind)
    return target


def _plugin() -> SlotPlugin:
    plugin = get_worker().plugins.get(PLUGIN_NAME)
    if not isinstance(plugin, SlotPlugin):
        raise BootscopeError(f"this Dask worker has no {PLUGIN_NAME} plugin (the client registers it)")
    return plugin


def _here(error: BootscopeError) -> BootscopeError:
    """Return ``error`` (same type, so the same exit code) saying which worker raised it."""
    return type(error)(f"Dask worker {get_worker().address}: {error}")


def choose_accel_task(
    document: Mapping[str, Any], requested: str, reprobe: bool, target_factory: TargetFactory
) -> AccelChoice:
    """Task: return the accelerator the plan's workload chooses on this worker for ``requested``."""
    try:
        workload = workload_from_document(document)
        return workload.choose_accel(worker_target(workload, target_factory), requested, reprobe)
    except BootscopeError as error:
        raise _here(error) from None


def prepare_task(document: Mapping[str, Any], accel: str, target_factory: TargetFactory) -> list[str]:
    """Task: prepare the plan's workload on this worker (kept for its slots); return the notes."""
    try:
        return list(_plugin().prepare(document, accel, target_factory)[2])
    except BootscopeError as error:
        raise _here(error) from None


def slot_task(job: SlotJob) -> MeasuredSlot:
    """Task: measure one slot on this worker and return its records."""
    try:
        return _plugin().measure(job)
    except BootscopeError as error:
        raise _here(error) from None


def quiet_dask_logs() -> Callable[[], None]:
    """Keep Dask's own log lines (connections, lost schedulers, retries, with tracebacks) off the
    terminal, unless BOOTSCOPE_DEBUG is set: bootscope says what matters in one line. Returns the
    function that puts the previous levels back."""
    if os.environ.get("BOOTSCOPE_DEBUG"):
        return lambda: None
    # Dask's configuration gives some of its loggers levels of their own: set every one of them.
    names = ["distributed", *(n for n in logging.root.manager.loggerDict if n.startswith("distributed."))]
    previous = {name: logging.getLogger(name).level for name in names}
    for name in names:
        logging.getLogger(name).setLevel(logging.CRITICAL)

    def restore() -> None:
        for name, level in previous.items():
            logging.getLogger(name).setLevel(level)

    return restore


def label_resource(key: str, value: str) -> str:
    """The Dask resource a worker labelled ``KEY=VALUE`` offers and a variant pinned to it needs."""
    return f"{LABEL_PREFIX}{key}={value}"


def label_of(resource: str) -> tuple[str, str]:
    """The (KEY, VALUE) of a label resource (see :func:`label_resource`)."""
    key, _, value = resource.removeprefix(LABEL_PREFIX).partition("=")
    return key, value


def serve(
    scheduler: str,
    slots: int,
    cores: tuple[int, ...] | None,
    name: str | None,
    say: Callable[[str], None],
    labels: tuple[tuple[str, str], ...] = (),
) -> None:
    """Run a Dask worker with ``slots`` boot slots for the scheduler at ``scheduler`` (a ``tcp://``
    address) until Ctrl-C, joining it again whenever it goes away and comes back; ``cores`` limits the
    worker (and so its guests) to those host CPUs; ``labels`` (KEY, VALUE) are offered as Dask
    resources, one per boot slot, that variants pinned with ``on=KEY=VALUE`` need; ``say`` gets one
    line per event. Raises InputError for cores this process may not use."""
    from bootscope.errors import InputError

    if cores:
        try:
            os.sched_setaffinity(0, cores)
        except (OSError, ValueError) as error:
            raise InputError(f"--cores {','.join(map(str, cores))}: {error}") from None
    # Dask logs every connection and, when the scheduler goes, a traceback; ``say`` tells the user.
    quiet_dask_logs()
    asyncio.run(_serve(scheduler, slots, name, say, labels))


async def _serve(
    scheduler: str,
    slots: int,
    name: str | None,
    say: Callable[[str], None],
    labels: tuple[tuple[str, str], ...],
) -> None:
    cores = ",".join(str(core) for core in sorted(os.sched_getaffinity(0)))
    resources: dict[str, float] = {RESOURCE: slots}
    resources.update({label_resource(key, value): slots for key, value in labels})
    shown = "".join(f", label {key}={value}" for key, value in labels)
    while True:
        async with Worker(
            scheduler,
            nthreads=slots,
            resources=resources,
            name=name,
            plugins=(SlotPlugin(),),
            dashboard=False,
        ) as worker:
            where = f"{slots} boot slot(s) on cores {cores}{shown}"
            say(f"worker {worker.address}: {where}, scheduler {scheduler}")
            await worker.finished()
        say(f"lost the scheduler {scheduler}; joining it again when it is back")
        await asyncio.sleep(RECONNECT_S)

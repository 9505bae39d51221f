"""The Dask executor: every slot of a run is one Dask task on a worker with a free ``boot`` slot.

The runner keeps everything else on the client: the seeded schedule (a slot is submitted when a
boot slot is free, in the schedule's order, so slots start in that order), warm-ups, the stopping
rule (batches of rounds), and the store, which only the client writes. A worker's result is stored
the moment it arrives.

Failures: a worker that dies mid-boot loses its task, and the scheduler runs it again on another
worker (up to Dask's ``distributed.scheduler.allowed-failures`` deaths per task, then the run stops
with an error); the client stores a slot once however many results reach it. A scheduler that goes
away cancels every task: the run stops as ``interrupted`` with exit code 3, and ``--resume ID
--executor ...`` runs the missing slots. Ctrl-C stops the run the same way; boots still running on
workers then finish there and are dropped.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from queue import Empty, Queue
from typing import TYPE_CHECKING, Any

from distributed import Client, Future, KilledWorker

from bootscope.errors import BootError, BootscopeError, InputError
from bootscope.lab.executors.dask_worker import (
    LABEL_PREFIX,
    PLUGIN_NAME,
    RESOURCE,
    SlotJob,
    SlotPlugin,
    TargetFactory,
    choose_accel_task,
    label_of,
    label_resource,
    prepare_task,
    quiet_dask_logs,
    slot_task,
)
from bootscope.lab.executors.remote import MeasuredSlot
from bootscope.lab.plans.boot_variant import labels_text
from bootscope.lab.plans.schedule import Slot
from bootscope.lab.qemu.accel import AccelChoice
from bootscope.lab.targets.base import Target
from bootscope.lab.targets.qemu import LocalQemu
from bootscope.lab.workloads.protocol import Workload

if TYPE_CHECKING:
    from bootscope.lab.slots import SlotLoop

SCHEME = "dask://"
DEFAULT_PORT = 8786  # Dask's own default scheduler port
CONNECT_TIMEOUT_S = 5.0
WORKER_WAIT_S = 60.0  # how long a run waits for at least one worker with a boot slot
POLL_S = 0.5  # how often the client looks at Ctrl-C, the scheduler and the workers while it waits


def scheduler_address(spec: str) -> str:
    """Return the ``tcp://HOST:PORT`` address of ``dask://HOST[:PORT]`` (also ``tcp://...`` or a bare
    ``HOST[:PORT]``; the port defaults to 8786). Raises InputError for an empty host or a bad port."""
    rest = spec.strip()
    for prefix in (SCHEME, "tcp://"):
        if rest.startswith(prefix):
            rest = rest[len(prefix) :]
            break
    rest = rest.rstrip("/")
    host, sep, port = rest.rpartition(":")
    if not sep:
        host, port = rest, str(DEFAULT_PORT)
    if not host or "/" in host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError(f"--executor {spec}: give dask://HOST:PORT (the Dask scheduler's address)")
    return f"tcp://{host}:{int(port)}"


def _boot_workers(client: Client) -> dict[str, dict[str, Any]]:
    """Return the scheduler's workers that declare boot slots (address -> Dask's worker info)."""
    workers: dict[str, dict[str, Any]] = client.scheduler_info(n_workers=-1).get("workers", {})
    return {address: info for address, info in workers.items() if info.get("resources", {}).get(RESOURCE)}


def _pinned(workload: Workload, workers: dict[str, dict[str, Any]], address: str) -> list[str]:
    """Return a note per variant pinned to worker labels; raises InputError for a label that no
    worker of the cluster at ``address`` carries (its slots would wait for ever)."""
    offered = {name for info in workers.values() for name in info.get("resources", {})}
    known = sorted("=".join(label_of(name)) for name in offered if name.startswith(LABEL_PREFIX))
    notes = []
    for variant in workload.variants:
        labels = workload.worker_labels(variant)
        for key, value in labels:
            if label_resource(key, value) not in offered:
                raise InputError(
                    f"variant {variant} runs on={key}={value} but no worker of {address} carries that"
                    f" label (their labels: {', '.join(known) or 'none'}; bootscope worker --label)"
                )
        if labels:
            named = labels_text(labels)
            notes.append(f"variant {variant} runs on the workers labelled {named}")
    return notes


@dataclass(slots=True)
class DaskExecutor:
    """Runs slots as tasks on the Dask cluster behind ``client`` (see the module docstring); the
    workers make their targets with ``target_factory`` (bootscope's local QEMU for real runs)."""

    client: Client
    address: str
    target_factory: TargetFactory = LocalQemu
    worker_wait_s: float = WORKER_WAIT_S
    _lost_since: float | None = field(default=None, init=False)

    def choose_accel(self, workload: Workload, target: Target, requested: str, reprobe: bool) -> AccelChoice:
        """Return the accelerator one worker chooses for ``requested`` (all workers use it)."""
        document = workload.document()
        choice: AccelChoice = self._call(choose_accel_task, document, requested, reprobe, self.target_factory)
        return choice

    def prepare(self, workload: Workload, target: Target, accel: str) -> list[str]:
        """Prepare the workload on one worker, so that a bad kernel or option fails before anything is
        stored (every other worker prepares it before its first slot); return its notes. Raises
        InputError when a variant is pinned to a worker label that no worker of the cluster carries."""
        notes: list[str] = self._call(prepare_task, workload.document(), accel, self.target_factory)
        return notes + _pinned(workload, _boot_workers(self.client), self.address)

    def host_info(self, target: Target) -> dict[str, Any]:
        """Return the client's description plus the executor, the scheduler and the workers seen now."""
        workers = {
            address: {
                "host": info.get("host"),
                "name": info.get("name"),
                RESOURCE: info["resources"][RESOURCE],
            }
            for address, info in _boot_workers(self.client).items()
        }
        return {**target.host_info(), "executor": "dask", "scheduler": self.address, "workers": workers}

    def slots_at_once(self, jobs: int) -> int:
        """Return the boot slots of all workers now (at least 1); ``jobs`` does not apply."""
        return max(1, int(sum(info["resources"][RESOURCE] for info in _boot_workers(self.client).values())))

    def run_batch(
        self,
        loop: SlotLoop,
        slots: Sequence[Slot],
        next_attempt: dict[int, int],
        cores: Sequence[tuple[int, ...] | None],
    ) -> None:
        """Run ``slots`` in schedule order, as many at once as the workers have boot slots (so each
        starts in its turn, and a slot waits on the client, not in some worker's queue), storing each
        result as it arrives. Raises BootError when the scheduler goes away or a slot's workers keep
        dying, a worker's BootscopeError as it is, KeyboardInterrupt on Ctrl-C, all after cancelling
        the tasks not finished."""
        document = loop.workload.document()
        labels = loop.workload.worker_labels
        arrived: Queue[Future[MeasuredSlot]] = Queue()
        to_submit = deque(slots)
        running: dict[Any, tuple[Slot, Future[MeasuredSlot]]] = {}

        def fill() -> None:
            at_once = self.slots_at_once(1)
            while to_submit and len(running) < at_once:
                slot = to_submit.popleft()
                attempt = next_attempt.get(slot.index, 0)
                job = SlotJob(document, loop.experiment.accel, slot, attempt, self.target_factory)
                key = f"bootscope-{loop.experiment.id}-slot-{slot.index}-{uuid.uuid4().hex[:8]}"
                needs = {RESOURCE: 1, **{label_resource(*label): 1 for label in labels(slot.variant)}}
                future = self.client.submit(slot_task, job, key=key, resources=needs, pure=False)
                running[future.key] = (slot, future)
                future.add_done_callback(arrived.put)
                loop.reporter.boot_started(slot)

        try:
            fill()
            while running:
                loop.stop_if_cancelled()
                try:
                    future = arrived.get(timeout=POLL_S)
                except Empty:
                    self._check_cluster(loop)
                    fill()  # a worker may have joined
                    continue
                slot, _ = running.pop(future.key)
                self._store(loop, slot, future)
                fill()
        except BaseException:
            with contextlib.suppress(Exception):
                self.client.cancel([future for _, future in running.values()])
            raise

    def _store(self, loop: SlotLoop, slot: Slot, future: Future[MeasuredSlot]) -> None:
        """Store a finished task's records, or raise what ended it."""
        if future.status == "cancelled":
            raise self._lost(loop)
        if future.status == "error":
            error = future.exception()
            if isinstance(error, KilledWorker):
                raise BootError(
                    f"slot {slot.index}: the Dask workers running it died again and again ({error});"
                    f" the run is interrupted (--resume {loop.experiment.id} continues)"
                )
            if isinstance(error, BootscopeError):
                raise error
            raise BootError(f"slot {slot.index} failed on a Dask worker: {type(error).__name__}: {error}")
        measured: MeasuredSlot = future.result()
        for note in measured.notes:
            loop.note(f"{measured.worker}: {note}")
        if not loop.record_measured(slot, measured.records):
            loop.note(f"slot {slot.index}: a second result (from {measured.worker}) was not stored")

    def _check_cluster(self, loop: SlotLoop) -> None:
        """Raise BootError if the scheduler is gone, or no worker has had a boot slot for too long."""
        if self.client.status not in ("running", "connecting"):
            raise self._lost(loop)
        if _boot_workers(self.client):
            self._lost_since = None
            return
        now = time.monotonic()
        self._lost_since = self._lost_since or now
        if now - self._lost_since > self.worker_wait_s:
            raise BootError(
                f"no Dask worker with a {RESOURCE!r} slot at {self.address} for {self.worker_wait_s:g} s;"
                f" the run is interrupted (--resume {loop.experiment.id} continues)"
            )

    def _lost(self, loop: SlotLoop) -> BootError:
        return BootError(
            f"lost the Dask scheduler at {self.address}; the run is interrupted"
            f" (--resume {loop.experiment.id} --executor {SCHEME}{self.address.removeprefix('tcp://')}"
            " continues)"
        )

    def _call(self, function: Any, *args: Any) -> Any:
        """Run ``function(*args)`` as a task on a worker with a boot slot; return its result. Raises a
        worker's BootscopeError as it is, BootError when the scheduler goes away."""
        future = self.client.submit(function, *args, resources={RESOURCE: 1}, pure=False)
        try:
            return future.result()
        except BootscopeError:
            raise
        except Exception as error:
            raise BootError(f"Dask scheduler {self.address}: {type(error).__name__}: {error}") from None


@contextlib.contextmanager
def dask_executor(
    spec: str,
    target_factory: TargetFactory = LocalQemu,
    worker_wait_s: float = WORKER_WAIT_S,
) -> Iterator[DaskExecutor]:
    """Connect to the Dask scheduler that ``spec`` (``dask://HOST:PORT``) names, wait up to
    ``worker_wait_s`` for a worker with a boot slot, and yield the executor; the connection closes
    when the block ends. Raises InputError for a bad address, BootError when the scheduler cannot be
    reached or no worker with a boot slot comes."""
    address = scheduler_address(spec)
    restore_logs = quiet_dask_logs()
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except Exception as error:  # OSError, TimeoutError: Dask words it
        restore_logs()
        raise BootError(f"cannot reach the Dask scheduler at {address}: {error}") from None
    try:
        client.register_plugin(SlotPlugin(), name=PLUGIN_NAME)
        deadline = time.monotonic() + worker_wait_s
        while not _boot_workers(client):
            if time.monotonic() > deadline:
                raise BootError(
                    f"no Dask worker with a {RESOURCE!r} slot joined {address} within {worker_wait_s:g} s"
                    f" (start one: bootscope worker {spec})"
                )
            time.sleep(POLL_S)
        yield DaskExecutor(client, address, target_factory, worker_wait_s)
    finally:
        with contextlib.suppress(Exception):
            client.close(timeout=CONNECT_TIMEOUT_S)
        restore_logs()

"""One slot measured away from the store: what a remote executor's worker runs, and what it sends back.

The worker runs the runner's own slot machinery (:class:`bootscope.lab.slots.SlotLoop`: quiet-host
waits and re-runs, host-load metering, pinning, the record's placement) with a sink that keeps the
records in memory instead of a database. The client stores them with
:meth:`~bootscope.lab.slots.SlotLoop.record_measured`, so the client stays the only writer of the
store and a worker needs no database credentials.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from bootscope.lab.plans.schedule import Slot
from bootscope.lab.progress import SilentReporter
from bootscope.lab.slots import SlotLoop
from bootscope.lab.targets.base import Target
from bootscope.lab.workloads.protocol import Workload
from bootscope.model import LogLine
from bootscope.store.records import STATUS_RUNNING, BootRecord, ExperimentRecord


@dataclass(frozen=True, slots=True)
class MeasuredSlot:
    """What one slot produced on a worker: every record (all attempts, in order, ``superseded`` final)
    with its console lines, the notes for the user, and the worker's address."""

    slot: Slot
    records: tuple[tuple[BootRecord, tuple[LogLine, ...]], ...]
    notes: tuple[str, ...] = ()
    worker: str = ""


@dataclass(slots=True)
class _Kept:
    """A sink that keeps records in memory; ids are positions in ``records`` (1-based)."""

    records: list[tuple[BootRecord, tuple[LogLine, ...]]] = field(default_factory=list)

    def record_boot(self, exp_id: int, record: BootRecord, lines: Sequence[LogLine]) -> int:
        self.records.append((record, tuple(lines)))
        return len(self.records)

    def supersede(self, exp_id: int, boot_ids: Sequence[int]) -> None:
        for boot_id in boot_ids:
            record, lines = self.records[boot_id - 1]
            self.records[boot_id - 1] = (replace(record, superseded=True), lines)


def measure_slot(
    workload: Workload,
    target: Target,
    accel: str,
    slot: Slot,
    attempt: int,
    affinity: tuple[int, ...] | None,
    placement: Mapping[str, Any],
    cancel: threading.Event | None = None,
) -> MeasuredSlot:
    """Measure ``slot`` of a prepared ``workload`` on ``target`` from attempt ``attempt``, the guest
    pinned to ``affinity``, as the runner would (quiet-host re-runs included), keeping the records
    instead of storing them; ``placement`` (host, CPU model, worker) goes into every record with the
    boot's cores and load. Returns the records in the order they were made. Raises what the
    workload raises (BootError for a guest that cannot start)."""
    kept = _Kept()
    # The loop stores nothing: the experiment's id is never used, only its accelerator.
    experiment = ExperimentRecord(
        id=0, created="", plan={}, seed=0, accel=accel, accel_reason="", host={}, status=STATUS_RUNNING
    )
    reporter = SilentReporter()
    loop = SlotLoop(
        kept, experiment, workload, target, reporter, cancel or threading.Event(), placement=placement
    )
    loop.run_slot(slot, attempt, affinity)
    return MeasuredSlot(slot, tuple(kept.records), tuple(reporter.notes))

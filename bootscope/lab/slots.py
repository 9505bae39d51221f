"""One slot's attempts: the machinery the runner and every executor share.

:class:`SlotLoop` runs a slot's attempts on a target (quiet-host re-runs, host-load metering, pinning
to the cores :func:`core_sets` hands out) and gives every record to a sink (the store, or a list a
remote worker sends back) with where it was measured. The runner (:mod:`bootscope.lab.runner`) owns
the schedule; executors (:mod:`bootscope.lab.executors`) decide where slots run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from bootscope.lab.hostinfo import measuring_host
from bootscope.lab.hostload import HostLoadMeter, wait_for_idle
from bootscope.lab.plans.schedule import Slot
from bootscope.lab.progress import Reporter
from bootscope.lab.targets.base import Target
from bootscope.lab.workloads.protocol import SlotRun, Workload, first_index
from bootscope.model import LogLine, Outcome
from bootscope.store.records import BootRecord, ExperimentRecord

# A slot is "disturbed" when other processes kept, on average, more than this many CPUs busy while it
# ran: on 2 cores a quarter CPU of someone else's work measurably slows a TCG guest.
DISTURBED_OTHER_CPUS = 0.25
IDLE_OTHER_CPUS = 0.2  # --quiet-host waits until others use less than this many CPUs
IDLE_WAIT_S = 60.0  # ... but no longer than this before each slot
QUIET_HOST_ATTEMPTS = 3  # a disturbed slot is run at most this many times in all


@dataclass(frozen=True, slots=True)
class _Rerun:
    """Which spoilt attempts of a slot may still be run again: a ``disturbed`` one (--quiet-host),
    a ``failed`` one (--retries)."""

    disturbed: bool
    failed: bool

    def wanted(self, disturbed: bool, failed: bool, earlier: Sequence[BootRecord]) -> bool:
        """Return True if a record (disturbed, failed) of this attempt, after ``earlier`` records of
        the same attempt, is to be superseded by running the slot again."""
        spoilt = (self.disturbed and disturbed) or (self.failed and failed)
        return spoilt or ((self.disturbed or self.failed) and any(r.superseded for r in earlier))


class BootSink(Protocol):
    """Where measured records go: the store, or (on a remote worker) a list sent back to the client."""

    def record_boot(self, exp_id: int, record: BootRecord, lines: Sequence[LogLine]) -> int:
        """Keep one record and its log; return its id."""

    def supersede(self, exp_id: int, boot_ids: Sequence[int]) -> None:
        """Mark kept records as replaced by a later attempt."""


@dataclass(slots=True)
class SlotLoop:
    """One run's slot machinery: runs a slot's attempts (quiet-host re-runs, load metering, pinning)
    and hands every record to ``store`` with where it was measured (``placement`` plus the cores and
    load of each boot)."""

    store: BootSink
    experiment: ExperimentRecord
    workload: Workload
    target: Target
    reporter: Reporter
    cancel: threading.Event
    pids: set[int] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    notes: list[str] = field(default_factory=list)
    boots_run: int = 0
    placement: Mapping[str, Any] = field(default_factory=measuring_host)
    recorded: set[int] = field(default_factory=set)  # slots stored from remote results (dedup)

    def note(self, message: str) -> None:
        """Tell the user (through the reporter) and keep the note for the result."""
        self.notes.append(message)
        self.reporter.note(message)

    def run_slot(self, slot: Slot, first_attempt: int, affinity: tuple[int, ...] | None) -> None:
        """Run ``slot`` from attempt ``first_attempt`` on: again while --quiet-host finds it disturbed
        (at most QUIET_HOST_ATTEMPTS in all) or, up to ``retries`` more times, while its boot fails;
        every attempt is stored, the replaced ones marked superseded."""
        settings = self.workload.settings
        quiet = settings.quiet_host
        quiet_last = max(first_attempt, QUIET_HOST_ATTEMPTS - 1) if quiet else first_attempt
        failed_last = first_attempt + settings.retries
        for attempt in range(first_attempt, max(quiet_last, failed_last) + 1):
            self.stop_if_cancelled()
            if quiet and not wait_for_idle(IDLE_OTHER_CPUS, IDLE_WAIT_S):
                self.note(f"host not idle after {IDLE_WAIT_S:g} s; measuring anyway")
            rerun = _Rerun(disturbed=quiet and attempt < quiet_last, failed=attempt < failed_last)
            emitted = self._attempt(slot, attempt, affinity, rerun)
            if not any(record.superseded for record in emitted):
                return
            for record in emitted:
                if rerun.failed and record.superseded and record.outcome != Outcome.OK.value:
                    self.note(
                        f"slot {slot.index} ({record.variant}): {record.outcome}"
                        f" ({record.reason or 'no reason given'}); booting it again (--retries)"
                    )
            # One spoilt measurement spoils the slot (a chain's kernels share one guest): re-run it.
            rest = [r.id for r in emitted if r.id is not None and not r.superseded]
            self.store.supersede(self.experiment.id, rest)

    def _attempt(
        self, slot: Slot, attempt: int, affinity: tuple[int, ...] | None, rerun: _Rerun
    ) -> list[BootRecord]:
        self.reporter.boot_started(slot)
        meter = HostLoadMeter()
        started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
        meter.start()
        started: list[int] = []
        emitted: list[BootRecord] = []

        def on_start(pid: int) -> None:
            meter.watch(pid)
            started.append(pid)
            with self.lock:
                self.pids.add(pid)

        def emit(record: BootRecord, lines: Sequence[LogLine]) -> BootRecord:
            load = meter.stop()  # so far: a chain's later kernels carry the load of the whole chain
            disturbed = load.other_cpus > DISTURBED_OTHER_CPUS
            record = replace(
                record,
                attempt=attempt,
                accel=record.accel or self.experiment.accel,
                started_at=started_at,
                disturbed=disturbed,
                other_cpu_s=round(load.other_cpu_s, 3),
                steal_s=round(load.steal_s, 3),
                superseded=rerun.wanted(disturbed, record.outcome != Outcome.OK.value, emitted),
                placement={
                    **self.placement,
                    "cores": sorted(affinity or os.sched_getaffinity(0)),
                    "load_1m": round(os.getloadavg()[0], 2),
                    "other_cpus": round(load.other_cpus, 3),
                },
            )
            record = replace(record, id=self.store.record_boot(self.experiment.id, record, lines))
            emitted.append(record)
            with self.lock:
                self.boots_run += 1
            self.reporter.boot_done(slot, record)
            return record

        run = SlotRun(
            slot=slot,
            attempt=attempt,
            first_index=first_index(slot, self.workload.records_per_slot),
            affinity=affinity,
            accel=self.experiment.accel,
            on_line=self._on_line,
            on_start=on_start,
            emit=emit,
            cancelled=self.cancel.is_set,
        )
        try:
            self.workload.run_slot(run, self.target)
        finally:
            with self.lock:
                self.pids.difference_update(started)  # the target has reaped them
        return emitted

    def record_measured(self, slot: Slot, measured: Sequence[tuple[BootRecord, Sequence[LogLine]]]) -> bool:
        """Store the records a remote executor measured for ``slot`` (every attempt, in order, its
        ``superseded`` mark final) and report them; return False, storing nothing, when this run has
        already stored the slot (a duplicate result: a slot is stored once). Raises StoreError."""
        with self.lock:
            if slot.index in self.recorded:
                return False
            self.recorded.add(slot.index)
        for record, lines in measured:
            stored = replace(record, id=None)
            stored = replace(stored, id=self.store.record_boot(self.experiment.id, stored, lines))
            with self.lock:
                self.boots_run += 1
            self.reporter.boot_done(slot, stored)
        return True

    def stop_if_cancelled(self) -> None:
        """Raise KeyboardInterrupt if the run was cancelled (Ctrl-C, SIGTERM)."""
        if self.cancel.is_set():
            raise KeyboardInterrupt

    def _on_line(self, _line: LogLine) -> None:
        # A Ctrl-C that arrives while Python forks QEMU is swallowed by the fork handlers; the CLI's
        # signal handler also sets ``cancel``, so the guest still stops at its next console line.
        self.stop_if_cancelled()

    def kill_running(self) -> None:
        """Stop every guest process this run started and has not reaped (their slots are not done)."""
        self.cancel.set()
        with self.lock:
            pids = list(self.pids)
        for pid in pids:
            if _is_our_child(pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)


def _is_our_child(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    fields = stat[stat.rfind(")") + 2 :].split()
    return len(fields) > 1 and fields[1] == str(os.getpid())


def core_sets(
    jobs: int, smp: int, note: Callable[[str], None], always: bool = False
) -> list[tuple[int, ...] | None]:
    """Return one CPU set per parallel job (None: no pinning for -j 1 unless ``always``), overlapping
    when too few."""
    if jobs == 1 and not always:
        return [None]
    cores = sorted(os.sched_getaffinity(0))
    if jobs * smp > len(cores):
        note(
            f"-j {jobs} x smp {smp} needs {jobs * smp} cores but {len(cores)} are available: parallel guests"
            " will share cores and slow each other down (the guest-side times shift)"
        )
    # a set never names a core twice (fewer cores than the guest's CPUs: the guest shares them)
    return [tuple(sorted({cores[(job * smp + k) % len(cores)] for k in range(smp)})) for job in range(jobs)]

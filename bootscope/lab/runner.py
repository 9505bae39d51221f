"""The runner: the one loop that runs every workload on every target.

It builds the seeded interleaved schedule, runs slots one at a time or ``jobs`` at once (threads,
each guest pinned to its own cores), waits for an idle host and re-runs disturbed slots under
``quiet_host``, applies the stopping rule after whole rounds, and stores every measurement the
moment it ends. Ctrl-C or any failure leaves the finished measurements stored and the experiment
``interrupted``; :func:`resume` runs only the slots that are not complete, in the same order.

Where the slots run is the executor's business (:class:`Executor`): this host's threads
(:class:`LocalThreads`, the default) or a remote one such as Dask's workers
(:mod:`bootscope.lab.dask_run`), which measure each slot there and hand its records back to be
stored here (:meth:`SlotLoop.record_measured`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from bootscope.errors import BootscopeError, StatsError
from bootscope.lab.executor import Executor, LocalThreads
from bootscope.lab.hostinfo import measuring_host
from bootscope.lab.progress import Reporter, SilentReporter
from bootscope.lab.schedule import Slot, build_schedule
from bootscope.lab.stopping import StopRule, stop_rule_for
from bootscope.lab.target import Target
from bootscope.lab.workload import SlotRun, Workload, first_index, in_slot, workload_from_document
from bootscope.model import LogLine
from bootscope.sources.hostload import HostLoadMeter, wait_for_idle
from bootscope.store import BootRecord, ExperimentRecord, Store
from bootscope.store.records import STATUS_COMPLETE, STATUS_INTERRUPTED, STATUS_RUNNING

# A slot is "disturbed" when other processes kept, on average, more than this many CPUs busy while it
# ran: on 2 cores a quarter CPU of someone else's work measurably slows a TCG guest.
DISTURBED_OTHER_CPUS = 0.25
IDLE_OTHER_CPUS = 0.2  # --quiet-host waits until others use less than this many CPUs
IDLE_WAIT_S = 60.0  # ... but no longer than this before each slot
QUIET_HOST_ATTEMPTS = 3  # a disturbed slot is run at most this many times in all
UNTIL_MAX_ROUNDS_FACTOR = 4  # --until precise without --max-n: at most 4x -n rounds


@dataclass(frozen=True, slots=True)
class RunResult:
    """How a run ended: the experiment, its final status, measurements stored now, notes for the
    user, and (``--until precise``) whether the stopping rule was met (None: no rule, or no verdict)."""

    experiment: ExperimentRecord
    status: str
    boots_run: int
    stopped_early: bool = False
    notes: tuple[str, ...] = ()
    until_satisfied: bool | None = None


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
        quiet = self.workload.settings.quiet_host
        last_attempt = max(first_attempt, QUIET_HOST_ATTEMPTS - 1) if quiet else first_attempt
        for attempt in range(first_attempt, last_attempt + 1):
            self.stop_if_cancelled()
            if quiet and not wait_for_idle(IDLE_OTHER_CPUS, IDLE_WAIT_S):
                self.note(f"host not idle after {IDLE_WAIT_S:g} s; measuring anyway")
            emitted = self._attempt(slot, attempt, affinity, retry_allowed=quiet and attempt < last_attempt)
            if not any(record.superseded for record in emitted):
                return
            # One disturbed measurement spoils the slot (a chain's kernels share one guest): re-run it.
            rest = [r.id for r in emitted if r.id is not None and not r.superseded]
            self.store.supersede(self.experiment.id, rest)

    def _attempt(
        self, slot: Slot, attempt: int, affinity: tuple[int, ...] | None, retry_allowed: bool
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
                superseded=retry_allowed and (disturbed or any(r.superseded for r in emitted)),
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


def start(
    workload: Workload,
    target: Target,
    store: Store,
    reporter: Reporter | None = None,
    stop_rule: StopRule | None = None,
    cancel: threading.Event | None = None,
    reprobe: bool = False,
    executor: Executor | None = None,
) -> RunResult:
    """Create the experiment for ``workload`` in ``store`` and run it on ``target``; return how it
    ended. ``stop_rule`` overrides the rule the settings name; setting ``cancel`` stops the run as
    Ctrl-C does; ``reprobe`` redoes a remembered KVM probe; ``executor`` says where slots run (default:
    this host's threads). Raises BootError/InputError before anything is stored (no kernel, bad
    options), StoreError if the store fails, KeyboardInterrupt on Ctrl-C (after marking it
    interrupted)."""
    reporter = reporter or SilentReporter()
    executor = executor or LocalThreads()
    choice = executor.choose_accel(workload, target, workload.settings.accel, reprobe)
    notes = executor.prepare(workload, target, choice.accel)
    experiment = store.create_experiment(
        plan=workload.document(),
        seed=workload.settings.seed,
        accel=choice.accel,
        accel_reason=choice.reason,
        host=executor.host_info(target),
        variants=workload.variant_records(),
    )
    return _execute(store, experiment, workload, target, reporter, stop_rule, cancel, notes, executor)


def resume(
    experiment_id: int | str,
    store: Store,
    target: Target,
    reporter: Reporter | None = None,
    stop_rule: StopRule | None = None,
    cancel: threading.Event | None = None,
    executor: Executor | None = None,
) -> RunResult:
    """Run the slots of a stored experiment that are not complete (same plan, seed, order and
    accelerator) with ``executor`` (default: this host's threads; it may differ from the one that
    started it); return how it ended. Raises like :func:`start`, and InputError for a stored plan
    this bootscope cannot read."""
    reporter = reporter or SilentReporter()
    experiment = store.experiment(experiment_id)
    if experiment.status == STATUS_COMPLETE:
        # A run that --until stopped early is complete although later slots were never run.
        note = f"experiment {experiment.id} is already complete; nothing to resume"
        reporter.note(note)
        return RunResult(experiment, STATUS_COMPLETE, 0, notes=(note,))
    workload = workload_from_document(experiment.plan)
    executor = executor or LocalThreads()
    notes = executor.prepare(workload, target, experiment.accel)
    if experiment.status != STATUS_RUNNING:
        store.set_status(experiment.id, STATUS_RUNNING)
    return _execute(store, experiment, workload, target, reporter, stop_rule, cancel, notes, executor)


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


@contextlib.contextmanager
def recording_status(
    store: Store, experiment_id: int, reporter: Reporter, on_abort: Callable[[], None] | None = None
) -> Iterator[None]:
    """Mark the experiment complete when the block ends, or interrupted when anything escapes it.

    On an exception (Ctrl-C, a crash, a store error) ``on_abort`` runs first (e.g. kill running guests),
    the status is set as far as the store still allows, and the exception propagates; the reporter
    is finished either way. Yields nothing.
    """
    try:
        yield
    except BaseException:
        if on_abort is not None:
            on_abort()
        with contextlib.suppress(BootscopeError):
            store.set_status(experiment_id, STATUS_INTERRUPTED)
        raise
    finally:
        reporter.finished()
    store.set_status(experiment_id, STATUS_COMPLETE)


def _pending(
    store: Store, experiment: ExperimentRecord, workload: Workload, schedule: Sequence[Slot]
) -> tuple[list[Slot], dict[int, int]]:
    """Return the slots still to run and each one's next attempt number; the records of a slot that
    was cut short (a chain interrupted mid-way) are marked superseded, since the slot runs again."""
    stored = store.boots(experiment.id)
    pending: list[Slot] = []
    next_attempt: dict[int, int] = {}
    for slot in schedule:
        mine = in_slot(stored, slot, workload.records_per_slot)
        final = [record for record in mine if not record.superseded]
        if mine and workload.slot_done(slot, final):
            continue
        pending.append(slot)
        if mine:
            next_attempt[slot.index] = max(record.attempt for record in mine) + 1
            store.supersede(experiment.id, [r.id for r in final if r.id is not None])
    return pending, next_attempt


def _execute(
    store: Store,
    experiment: ExperimentRecord,
    workload: Workload,
    target: Target,
    reporter: Reporter,
    stop_rule: StopRule | None,
    cancel: threading.Event | None,
    notes: Sequence[str],
    executor: Executor,
) -> RunResult:
    settings = workload.settings
    rule = stop_rule
    if rule is None:
        rule = stop_rule_for(settings.until, settings.precision, workload.variants[0])
    rounds = settings.samples_per_variant
    if rule is not None:
        rounds = settings.max_n or settings.samples_per_variant * UNTIL_MAX_ROUNDS_FACTOR
    schedule = build_schedule(workload.variants, rounds, settings.warmup_per_variant, experiment.seed)
    pending, next_attempt = _pending(store, experiment, workload, schedule)
    loop = SlotLoop(store, experiment, workload, target, reporter, cancel or threading.Event())
    for message in notes:
        loop.note(message)
    cores = core_sets(settings.jobs, workload.max_smp, loop.note)
    per_slot = workload.records_per_slot
    reporter.started(experiment.id, len(schedule) * per_slot, (len(schedule) - len(pending)) * per_slot)
    stopped_early = False
    satisfied: bool | None = None
    with recording_status(store, experiment.id, reporter, on_abort=loop.kill_running):
        at_once = executor.slots_at_once(settings.jobs)
        for batch in _batches(pending, at_once, len(workload.variants), rule is not None):
            executor.run_batch(loop, batch, next_attempt, cores)
            measured_rounds = batch[-1].round + 1 - settings.warmup_per_variant if batch else 0
            if rule is not None and measured_rounds >= settings.samples_per_variant:
                satisfied = _rule_says_stop(rule, store.samples(experiment.id, workload.stop_metric), loop)
                if satisfied:
                    stopped_early = batch[-1].round + 1 < len(schedule) // len(workload.variants)
                    break
        if satisfied is False:
            loop.note(
                f"--until precise: {workload.stop_metric} is not yet precise to"
                f" {settings.precision * 100:g} % after {rounds} slots per variant (the most allowed:"
                " raise --max-n or loosen --precision)"
            )
    return RunResult(
        experiment=store.experiment(experiment.id),
        status=STATUS_COMPLETE,
        boots_run=loop.boots_run,
        stopped_early=stopped_early,
        notes=tuple(loop.notes),
        until_satisfied=satisfied,
    )


def _batches(pending: Sequence[Slot], jobs: int, variants: int, by_rounds: bool) -> list[list[Slot]]:
    """Return the pending slots in the batches to run: all at once, or (for a stopping rule, which
    decides after complete rounds) a few rounds at a time, enough to keep ``jobs`` slots busy."""
    if not by_rounds:
        return [list(pending)]
    rounds_per_batch = max(1, -(-jobs // variants))
    rounds = sorted({slot.round for slot in pending})
    groups = [rounds[i : i + rounds_per_batch] for i in range(0, len(rounds), rounds_per_batch)]
    return [[slot for slot in pending if slot.round in group] for group in groups]


def _rule_says_stop(rule: StopRule, samples: dict[str, list[float]], loop: SlotLoop) -> bool:
    try:
        return rule(samples)
    except StatsError as error:  # e.g. a NaN that cannot come from a parsed log; keep measuring
        loop.note(f"--until precise could not judge the samples ({error}); measuring on")
        return False

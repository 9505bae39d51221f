"""The runner: the one loop that runs every workload on every target.

It builds the seeded interleaved schedule, runs slots one at a time or ``jobs`` at once (threads,
each guest pinned to its own cores), waits for an idle host and re-runs disturbed slots under
``quiet_host``, applies the stopping rule after whole rounds, and stores every measurement the
moment it ends. Ctrl-C or any failure leaves the finished measurements stored and the experiment
``interrupted``; :func:`resume` runs only the slots that are not complete, in the same order.

Where the slots run is the executor's business (:class:`Executor`): this host's threads
(:class:`LocalThreads`, the default) or a remote one such as Dask's workers
(:mod:`bootscope.lab.executors.dask`), which measure each slot there and hand its records back to be
stored here (:meth:`SlotLoop.record_measured`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from bootscope.errors import BootscopeError, StatsError
from bootscope.lab.executors.local import Executor, LocalThreads
from bootscope.lab.plans.schedule import Slot, build_schedule
from bootscope.lab.plans.stopping import StopRule, stop_rule_for
from bootscope.lab.progress import Reporter, SilentReporter
from bootscope.lab.slots import SlotLoop, core_sets
from bootscope.lab.targets import close_opened, target_for
from bootscope.lab.targets.base import Target, require
from bootscope.lab.workloads import workload_from_document
from bootscope.lab.workloads.protocol import Workload, in_slot
from bootscope.store import ExperimentRecord, Store
from bootscope.store.records import STATUS_COMPLETE, STATUS_INTERRUPTED, STATUS_RUNNING

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


def start(
    workload: Workload,
    target: Target | None,
    store: Store,
    reporter: Reporter | None = None,
    stop_rule: StopRule | None = None,
    cancel: threading.Event | None = None,
    reprobe: bool = False,
    executor: Executor | None = None,
    meta: Mapping[str, str] | None = None,
) -> RunResult:
    """Create the experiment for ``workload`` in ``store`` (labelled ``meta``: ``--meta`` KEY=VALUE)
    and run it on the place the workload's plan names (opened here and closed at the end; ``target``:
    that place already open, a test's fake, see :func:`bootscope.lab.targets.target_for`); return
    how it ended.
    ``stop_rule`` overrides the rule the settings name; setting ``cancel`` stops the run as Ctrl-C
    does; ``reprobe`` redoes a remembered KVM probe; ``executor`` says where slots run (default:
    this host's threads). Raises BootError/InputError before anything is stored (no kernel, bad
    options, a target without the capability the workload needs), StoreError if the store fails,
    KeyboardInterrupt on Ctrl-C (after marking it interrupted)."""
    reporter = reporter or SilentReporter()
    executor = executor or LocalThreads()
    place = target_for(workload.where(), target)
    try:
        require(place, workload.needs, workload.kind)
        choice = executor.choose_accel(workload, place, workload.settings.accel, reprobe)
        notes = executor.prepare(workload, place, choice.accel)
        experiment = store.create_experiment(
            plan=workload.document(),
            seed=workload.settings.seed,
            accel=choice.accel,
            accel_reason=choice.reason,
            host=executor.host_info(place),
            variants=workload.variant_records(),
            meta=meta,
        )
        return _execute(store, experiment, workload, place, reporter, stop_rule, cancel, notes, executor)
    finally:
        close_opened(place, target)


def resume(
    experiment_id: int | str,
    store: Store,
    target: Target | None,
    reporter: Reporter | None = None,
    stop_rule: StopRule | None = None,
    cancel: threading.Event | None = None,
    executor: Executor | None = None,
) -> RunResult:
    """Run the slots of a stored experiment that are not complete (same plan, seed, order and
    accelerator) on the place its plan names (``target``: as for :func:`start`) with ``executor``
    (default: this host's threads; it may differ from the one that started it); return how it ended.
    Raises like :func:`start`, and InputError for a stored plan this bootscope cannot read."""
    reporter = reporter or SilentReporter()
    experiment = store.experiment(experiment_id)
    if experiment.status == STATUS_COMPLETE:
        # A run that --until stopped early is complete although later slots were never run.
        note = f"experiment {experiment.id} is already complete; nothing to resume"
        reporter.note(note)
        return RunResult(experiment, STATUS_COMPLETE, 0, notes=(note,))
    workload = workload_from_document(experiment.plan)
    place = target_for(workload.where(), target)
    try:
        require(place, workload.needs, workload.kind)
        executor = executor or LocalThreads()
        notes = executor.prepare(workload, place, experiment.accel)
        if experiment.status != STATUS_RUNNING:
            store.set_status(experiment.id, STATUS_RUNNING)
        return _execute(store, experiment, workload, place, reporter, stop_rule, cancel, notes, executor)
    finally:
        close_opened(place, target)


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
    schedule = build_schedule(
        workload.variants, rounds, settings.warmup_per_variant, experiment.seed, dict(settings.slots_a_round)
    )
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
                    stopped_early = batch[-1].round + 1 < settings.warmup_per_variant + rounds
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

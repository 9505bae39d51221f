"""Run an experiment: boot every slot of the schedule, measure it, and store it the moment it ends.

One accelerator choice and one initramfs per experiment; boots run one at a time or ``jobs`` at once
(threads, each QEMU pinned to its own cores). Ctrl-C or any failure leaves the finished boots stored
and the experiment ``interrupted``; :func:`resume_experiment` runs only the missing positions, in the
same seeded order. Under ``quiet_host`` a boot that other processes disturbed is re-run (a bounded
number of times); the disturbed attempt stays stored, marked superseded.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from queue import Queue

from bootscope.errors import BootscopeError, InputError, StatsError
from bootscope.experiment.hostinfo import host_info
from bootscope.experiment.measure import measure_boot
from bootscope.experiment.plan import Plan, VariantSpec, plan_from_dict
from bootscope.experiment.progress import Reporter, SilentReporter
from bootscope.experiment.schedule import Slot, build_schedule
from bootscope.experiment.stopping import STOP_METRIC, StopRule, stop_rule_for
from bootscope.model import Boot, LogLine
from bootscope.sources.accel import AccelChoice, choose_accel
from bootscope.sources.hostload import HostLoadMeter, wait_for_idle
from bootscope.sources.initramfs import InitramfsSpec, build_initramfs
from bootscope.sources.kernels import resolve_kernel
from bootscope.sources.qemu import BootConfig, boot_once, disk_format, validate
from bootscope.store import BootRecord, ExperimentRecord, Store, VariantRecord
from bootscope.store.records import STATUS_COMPLETE, STATUS_INTERRUPTED, STATUS_RUNNING

# A boot is "disturbed" when other processes kept, on average, more than this many CPUs busy while it
# ran: on 2 cores a quarter CPU of someone else's work measurably slows a TCG guest.
DISTURBED_OTHER_CPUS = 0.25
IDLE_OTHER_CPUS = 0.2  # --quiet-host waits until others use less than this many CPUs
IDLE_WAIT_S = 60.0  # ... but no longer than this before each boot
QUIET_HOST_ATTEMPTS = 3  # a disturbed boot is run at most this many times in all
UNTIL_MAX_ROUNDS_FACTOR = 4  # --until precise without --max-n: at most 4x -n rounds


@dataclass(frozen=True, slots=True)
class RunResult:
    """How a run ended: the experiment, its final status, boots run now, and notes for the user."""

    experiment: ExperimentRecord
    status: str
    boots_run: int
    stopped_early: bool = False
    notes: tuple[str, ...] = ()
    # --until precise: whether the stopping rule was met (None: no rule, or it never got to judge).
    until_satisfied: bool | None = None


@dataclass(slots=True)
class _Runner:
    store: Store
    experiment: ExperimentRecord
    plan: Plan
    configs: dict[str, BootConfig]
    releases: dict[str, str | None]
    reporter: Reporter
    cancel: threading.Event = field(default_factory=threading.Event)
    pids: set[int] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    core_sets: list[tuple[int, ...] | None] = field(default_factory=lambda: [None])
    notes: list[str] = field(default_factory=list)
    boots_run: int = 0

    def note(self, message: str) -> None:
        """Tell the user (through the reporter) and keep the note for the result."""
        self.notes.append(message)
        self.reporter.note(message)

    def run_slot(self, slot: Slot, first_attempt: int, affinity: tuple[int, ...] | None) -> None:
        variant = next(v for v in self.plan.variants if v.name == slot.variant)
        config = replace(self.configs[slot.variant], cpu_affinity=affinity)
        last_attempt = max(first_attempt, QUIET_HOST_ATTEMPTS - 1) if self.plan.quiet_host else first_attempt
        for attempt in range(first_attempt, last_attempt + 1):
            self._stop_if_cancelled()
            if self.plan.quiet_host and not wait_for_idle(IDLE_OTHER_CPUS, IDLE_WAIT_S):
                self.note(f"host not idle after {IDLE_WAIT_S:g} s; booting anyway")
            self.reporter.boot_started(slot)
            meter = HostLoadMeter()
            started_at = datetime.now(UTC).isoformat(timespec="milliseconds")
            meter.start()
            started: list[int] = []

            def on_start(pid: int, meter: HostLoadMeter = meter, started: list[int] = started) -> None:
                meter.watch(pid)
                started.append(pid)
                with self.lock:
                    self.pids.add(pid)

            boot = boot_once(config, on_line=self._on_line, on_start=on_start)
            load = meter.stop()
            with self.lock:
                self.pids.difference_update(started)  # boot_once has reaped it
            # Stopped by us: its outcome says nothing about the kernel, so it is not recorded.
            self._stop_if_cancelled()
            metrics, release, note = measure(boot, variant, self.releases[slot.variant])
            disturbed = load.other_cpus > DISTURBED_OTHER_CPUS
            retry = self.plan.quiet_host and disturbed and attempt < last_attempt
            record = BootRecord(
                variant=slot.variant,
                index=slot.index,
                warmup=slot.warmup,
                outcome=boot.outcome.value,
                reason="; ".join(part for part in (boot.reason, note) if part),
                accel=boot.accel,
                command=boot.command,
                kernel_release=release,
                host_start_ns=boot.host_start_ns,
                disturbed=disturbed,
                other_cpu_s=round(load.other_cpu_s, 3),
                steal_s=round(load.steal_s, 3),
                started_at=started_at,
                attempt=attempt,
                superseded=retry,
                metrics=metrics,
            )
            self.store.record_boot(self.experiment.id, record, boot.lines)
            with self.lock:
                self.boots_run += 1
            self.reporter.boot_done(slot, record)
            if not retry:
                return

    def _stop_if_cancelled(self) -> None:
        if self.cancel.is_set():
            raise KeyboardInterrupt

    def _on_line(self, _line: LogLine) -> None:
        # A Ctrl-C that arrives while Python forks QEMU is swallowed by the fork handlers; the CLI's
        # signal handler also sets ``cancel``, so the boot still stops at its next console line.
        self._stop_if_cancelled()

    def kill_running(self) -> None:
        """Stop every QEMU this run started and has not reaped (their boots are not recorded)."""
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


def measure(
    boot: Boot, variant: VariantSpec, release_hint: str | None
) -> tuple[dict[str, float | None], str | None, str]:
    """Return (metrics in seconds, kernel release, note) for one boot of ``variant`` (see
    :func:`bootscope.experiment.measure.measure_boot`). Never raises for a bad log."""
    return measure_boot(boot, variant.marker, release_hint)


def prepare_configs(plan: Plan, accel: str) -> tuple[dict[str, BootConfig], dict[str, str | None]]:
    """Return each variant's BootConfig (kernel resolved, initramfs built, no CPU pinning) and the
    kernel release its image names; raises BootError (no kernel, no busybox) or InputError."""
    configs: dict[str, BootConfig] = {}
    releases: dict[str, str | None] = {}
    for variant in plan.variants:
        user_initrd = Path(variant.initrd) if variant.initrd else None
        kernel = resolve_kernel(variant.kernel, initrd=user_initrd)
        initrd = _guest_initrd(variant)
        disk = Path(variant.disk) if variant.disk else None
        config = BootConfig(
            kernel=kernel.image,
            initrd=initrd,
            append=variant.append,
            smp=variant.smp,
            mem_mb=variant.mem_mb,
            cpu=variant.cpu,
            accel=accel,
            icount_shift=variant.icount_shift,
            extra_qemu_args=variant.qemu_args,
            timeout_s=plan.timeout_s,
            marker_regex=variant.marker,
            # The marker ends the measurement; waiting for the guest's poweroff would only cost time.
            stop_on_marker=True,
            disk=disk,
            # Inspected once here, not before every boot.
            disk_format=disk_format(disk) if disk is not None else None,
        )
        try:
            validate(config)
        except InputError as error:
            raise InputError(f"variant {variant.name}: {error}") from None
        configs[variant.name] = config
        releases[variant.name] = kernel.release
    return configs, releases


def _guest_initrd(variant: VariantSpec) -> Path | None:
    """Return the initramfs ``variant`` boots: the user's own, none (a disk boots by itself), or
    bootscope's, built with the variant's commands and files. Raises BootError/InputError like
    :func:`build_initramfs`."""
    if variant.initrd:
        return Path(variant.initrd)
    if variant.disk:
        return None
    files = tuple((Path(host), guest) for host, guest in variant.files)
    return build_initramfs(InitramfsSpec(commands_before_marker=variant.commands, extra_files=files))


def _choose_accel(plan: Plan, reprobe: bool = False) -> AccelChoice:
    if plan.accel == "auto" and any(v.icount_shift is not None for v in plan.variants):
        return AccelChoice("tcg", "TCG: --icount counts instructions, which only TCG can do")
    first = plan.variants[0]
    user_initrd = Path(first.initrd) if first.initrd else None
    kernel = resolve_kernel(first.kernel, initrd=user_initrd)
    # A disk boot ends on the user's marker, which the probe does not know: probe with bootscope's own.
    probe_initrd = _guest_initrd(first) or build_initramfs(InitramfsSpec())
    return choose_accel(plan.accel, kernel.image, probe_initrd, reprobe=reprobe)


def start_experiment(
    plan: Plan,
    store: Store,
    reporter: Reporter | None = None,
    stop_rule: StopRule | None = None,
    cancel: threading.Event | None = None,
    reprobe: bool = False,
) -> RunResult:
    """Create the experiment for ``plan`` in ``store`` and run it; return how it ended.

    ``stop_rule`` overrides the rule that ``plan.until`` names; setting ``cancel`` (e.g. from a signal
    handler) stops the run as Ctrl-C does. Raises BootError/InputError before
    anything is stored (no kernel, bad options), StoreError if the store fails, KeyboardInterrupt on
    Ctrl-C (after marking the experiment interrupted). ``reprobe``: redo a remembered KVM probe."""
    reporter = reporter or SilentReporter()
    rule = (
        stop_rule
        if stop_rule is not None
        else stop_rule_for(plan.until, plan.precision, plan.variants[0].name)
    )
    choice = _choose_accel(plan, reprobe)
    configs, releases = prepare_configs(plan, choice.accel)
    experiment = store.create_experiment(
        plan=plan.to_dict(),
        seed=plan.seed,
        accel=choice.accel,
        accel_reason=choice.reason,
        host=host_info(),
        variants=[VariantRecord(v.name, v.config()) for v in plan.variants],
    )
    return _execute(store, experiment, plan, configs, releases, reporter, rule, cancel)


def resume_experiment(
    experiment_id: int | str,
    store: Store,
    reporter: Reporter | None = None,
    stop_rule: StopRule | None = None,
    cancel: threading.Event | None = None,
) -> RunResult:
    """Run the positions of a stored experiment that have no final boot yet (same plan, seed, order
    and accelerator); return how it ended. Raises like :func:`start_experiment`."""
    reporter = reporter or SilentReporter()
    experiment = store.experiment(experiment_id)
    plan = plan_from_dict(experiment.plan)
    rule = (
        stop_rule
        if stop_rule is not None
        else stop_rule_for(plan.until, plan.precision, plan.variants[0].name)
    )
    if experiment.status == STATUS_COMPLETE:
        # A run that --until stopped early is complete although later positions were never booted.
        note = f"experiment {experiment.id} is already complete; nothing to resume"
        reporter.note(note)
        return RunResult(experiment, STATUS_COMPLETE, 0, notes=(note,))
    configs, releases = prepare_configs(plan, experiment.accel)
    if experiment.status != STATUS_RUNNING:
        store.set_status(experiment.id, STATUS_RUNNING)
    return _execute(store, experiment, plan, configs, releases, reporter, rule, cancel)


def _core_sets(jobs: int, smp: int, note: Callable[[str], None]) -> list[tuple[int, ...] | None]:
    """Return one CPU set per parallel job (None: no pinning for -j 1), overlapping when too few."""
    if jobs == 1:
        return [None]
    cores = sorted(os.sched_getaffinity(0))
    if jobs * smp > len(cores):
        note(
            f"-j {jobs} x smp {smp} needs {jobs * smp} cores but {len(cores)} are available: parallel boots"
            " will share cores and slow each other down (the guest-side times shift)"
        )
    return [tuple(cores[(job * smp + k) % len(cores)] for k in range(smp)) for job in range(jobs)]


@contextlib.contextmanager
def recording_status(
    store: Store, experiment_id: int, reporter: Reporter, on_abort: Callable[[], None] | None = None
) -> Iterator[None]:
    """Mark the experiment complete when the block ends, or interrupted when anything escapes it.

    On an exception (Ctrl-C, a crash, a store error) ``on_abort`` runs first (e.g. kill running QEMUs),
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


def _execute(
    store: Store,
    experiment: ExperimentRecord,
    plan: Plan,
    configs: dict[str, BootConfig],
    releases: dict[str, str | None],
    reporter: Reporter,
    rule: StopRule | None,
    cancel: threading.Event | None,
) -> RunResult:
    rounds = plan.samples_per_variant
    if rule is not None:
        rounds = plan.max_n or plan.samples_per_variant * UNTIL_MAX_ROUNDS_FACTOR
    schedule = build_schedule(
        [v.name for v in plan.variants], rounds, plan.warmup_per_variant, experiment.seed
    )
    stored = store.boots(experiment.id)
    done = {boot.index for boot in stored if not boot.superseded}
    next_attempt: dict[int, int] = {}
    for boot in stored:
        next_attempt[boot.index] = max(next_attempt.get(boot.index, 0), boot.attempt + 1)
    pending = [slot for slot in schedule if slot.index not in done]
    runner = _Runner(store, experiment, plan, configs, releases, reporter, cancel or threading.Event())
    max_smp = max(config.smp for config in configs.values())
    runner.core_sets = _core_sets(plan.jobs, max_smp, runner.note)
    reporter.started(experiment.id, len(schedule), len(schedule) - len(pending))
    stopped_early = False
    satisfied: bool | None = None
    with recording_status(store, experiment.id, reporter, on_abort=runner.kill_running):
        for batch in _batches(pending, plan, rule is not None):
            _run_batch(runner, batch, next_attempt)
            measured_rounds = batch[-1].round + 1 - plan.warmup_per_variant if batch else 0
            if rule is not None and measured_rounds >= plan.samples_per_variant:
                satisfied = _rule_says_stop(rule, store.samples(experiment.id, STOP_METRIC), runner)
                if satisfied:
                    stopped_early = batch[-1].round + 1 < len(schedule) // len(plan.variants)
                    break
        if satisfied is False:
            runner.note(
                f"--until precise: {STOP_METRIC} is not yet precise to {plan.precision * 100:g} % after"
                f" {rounds} boots per variant (the most allowed: raise --max-n or loosen --precision)"
            )
    return RunResult(
        experiment=store.experiment(experiment.id),
        status=STATUS_COMPLETE,
        boots_run=runner.boots_run,
        stopped_early=stopped_early,
        notes=tuple(runner.notes),
        until_satisfied=satisfied,
    )


def _batches(pending: Sequence[Slot], plan: Plan, by_rounds: bool) -> list[list[Slot]]:
    """Return the pending slots in the batches to run: all at once, or (for a stopping rule, which
    decides after complete rounds) a few rounds at a time, enough to keep ``jobs`` boots busy."""
    if not by_rounds:
        return [list(pending)]
    rounds_per_batch = max(1, -(-plan.jobs // len(plan.variants)))
    rounds = sorted({slot.round for slot in pending})
    groups = [rounds[i : i + rounds_per_batch] for i in range(0, len(rounds), rounds_per_batch)]
    return [[slot for slot in pending if slot.round in group] for group in groups]


def _rule_says_stop(rule: StopRule, samples: dict[str, list[float]], runner: _Runner) -> bool:
    try:
        return rule(samples)
    except StatsError as error:  # e.g. a NaN that cannot come from a parsed log; keep booting
        runner.note(f"--until precise could not judge the samples ({error}); booting on")
        return False


def _run_batch(runner: _Runner, slots: Sequence[Slot], next_attempt: dict[int, int]) -> None:
    if runner.plan.jobs == 1:
        for slot in slots:
            runner.run_slot(slot, next_attempt.get(slot.index, 0), None)
        return
    free: Queue[tuple[int, ...] | None] = Queue()
    for cores in runner.core_sets:
        free.put(cores)

    def job(slot: Slot) -> None:
        cores = free.get()
        try:
            runner.run_slot(slot, next_attempt.get(slot.index, 0), cores)
        finally:
            free.put(cores)

    pool = ThreadPoolExecutor(max_workers=runner.plan.jobs, thread_name_prefix="bootscope-boot")
    futures: list[Future[None]] = [pool.submit(job, slot) for slot in slots]
    try:
        finished, _ = wait(futures, return_when=FIRST_EXCEPTION)
        for future in finished:
            future.result()  # re-raise a worker's error here
    except BaseException:
        runner.kill_running()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)

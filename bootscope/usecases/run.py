"""The run use case: boot a plan's variants (the boot workload) on a target with the one runner.

``bootscope run``, ``sweep``, ``history`` and ``bisect-run`` all start or resume boot experiments
through these two functions; the loop itself is :mod:`bootscope.lab.runner`. :func:`run_boots` is
what ``bootscope run`` calls: the plan built from what was given, the store and executor opened, the
run started or resumed, and its summary read back.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bootscope.errors import InputError
from bootscope.lab import runner
from bootscope.lab.executors import open_executor
from bootscope.lab.executors.local import Executor
from bootscope.lab.plans.boot import Plan, build_plan
from bootscope.lab.plans.kexec import KexecPlan
from bootscope.lab.plans.settings import GivenSettings
from bootscope.lab.plans.ssh import SshPlan
from bootscope.lab.plans.stopping import StopRule
from bootscope.lab.progress import Reporter
from bootscope.lab.runner import RunResult
from bootscope.lab.targets.base import Target
from bootscope.lab.workloads.boot import BootWorkload
from bootscope.lab.workloads.kexec import KexecWorkload
from bootscope.store import Store
from bootscope.usecases.summary import RunSummary, summarize_run
from bootscope.usecases.watch.labels import parse_labels

__all__ = [
    "BootRequest",
    "RunOutcome",
    "RunResult",
    "resume_experiment",
    "run_boots",
    "start_experiment",
    "start_kexec",
    "start_ssh",
]


def start_experiment(
    plan: Plan,
    store: Store,
    reporter: Reporter | None = None,
    stop_rule: StopRule | None = None,
    cancel: threading.Event | None = None,
    target: Target | None = None,
    reprobe: bool = False,
    executor: Executor | None = None,
    meta: Mapping[str, str] | None = None,
) -> RunResult:
    """Create the experiment for ``plan`` in ``store`` (labelled ``meta``) and boot it on ``target``
    (default: QEMU on this host) with ``executor`` (default: this host's threads; see
    :func:`open_executor`); return how it ended. ``stop_rule`` overrides the rule that ``plan.until`` names;
    setting ``cancel`` (e.g. from a signal handler) stops the run as Ctrl-C does. Raises
    BootError/InputError before anything is stored (no kernel, bad options), StoreError if the store
    fails, KeyboardInterrupt on Ctrl-C (after marking the experiment interrupted). ``reprobe``
    redoes a remembered KVM probe."""
    workload = BootWorkload(plan)
    return runner.start(workload, target, store, reporter, stop_rule, cancel, reprobe, executor, meta)


def resume_experiment(
    experiment_id: int | str,
    store: Store,
    reporter: Reporter | None = None,
    stop_rule: StopRule | None = None,
    cancel: threading.Event | None = None,
    target: Target | None = None,
    executor: Executor | None = None,
) -> RunResult:
    """Run the slots of a stored experiment (a boot or a kexec run) that are not complete yet, with
    the same plan, seed, order and accelerator, on ``executor`` (any: a run started locally can end
    on Dask); return how it ended. Raises like :func:`start_experiment`."""
    return runner.resume(experiment_id, store, target, reporter, stop_rule, cancel, executor)


@dataclass(frozen=True, slots=True)
class BootRequest:
    """What ``bootscope run`` was asked to boot: ``kernel`` (a path or spec, None with only a plan file
    or an image), the options given for every variant in the order the command line lists them
    (``(option name, value)``, e.g. ``("smp", 2)``; see :func:`base_options`), the ``--variant``
    texts, the ``--plan`` file, the run settings given (None when resuming: the stored plan's
    are used, whatever was given), and the ``--meta KEY=VALUE`` texts (``revision``: the point of a
    watched series this run is; see ``usecases/watch/labels.py``)."""

    kernel: str | None
    settings: GivenSettings | None
    base_options: tuple[tuple[str, Any], ...] = ()
    variant_texts: tuple[str, ...] = ()
    plan_file: Path | None = None
    meta: tuple[str, ...] = ()


def base_options(
    singles: Mapping[str, Any], repeated: Mapping[str, Sequence[str] | None]
) -> tuple[tuple[str, Any], ...]:
    """Return the options given for every variant as ``(option name, value)`` pairs: each of
    ``singles`` (option name -> value) whose value is not None, then every value of each of
    ``repeated`` (qemu-arg, command, file), in that order."""
    given = [(name, value) for name, value in singles.items() if value is not None]
    for name, values in repeated.items():
        given += [(name, value) for value in values or []]
    return tuple(given)


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """A finished (or resumed) run: how the runner ended, the summary read back from the store, and
    the store's name (where it is kept). ``seed_given`` says whether the seed was the user's (given,
    or a resumed run's), not drawn at random now."""

    result: RunResult
    summary: RunSummary
    db: str
    seed_given: bool = False


def run_boots(
    request: BootRequest | None,
    *,
    db: str,
    resume: str | None = None,
    executor_spec: str | None = None,
    jobs: int | None = None,
    reporter: Reporter | None = None,
    cancel: threading.Event | None = None,
    reprobe: bool = False,
) -> RunOutcome:
    """Start the boot experiment ``request`` describes, or resume stored experiment ``resume`` (an
    id or ``latest``), in store ``db`` on the executor ``executor_spec`` names (``jobs``: -j as
    given, which Dask refuses above 1); return the outcome with its summary. Raises InputError for
    a resume that also names what to boot, nothing to boot, or a bad plan; BootError, StoreError
    and KeyboardInterrupt as :func:`start_experiment` does."""
    request = request or BootRequest(kernel=None, settings=None)
    settings = request.settings or GivenSettings()
    labels = parse_labels(request.meta)
    with Store.open(db) as store, open_executor(executor_spec, jobs) as executor:
        if resume is not None:
            if request.kernel or request.variant_texts or request.plan_file or request.meta:
                raise InputError(
                    "--resume takes no KERNEL, --variant, --plan or --meta: it reruns the stored plan"
                )
            result = resume_experiment(resume, store, reporter, cancel=cancel, executor=executor)
        else:
            image = any(name == "image" for name, _ in request.base_options)
            if not request.kernel and request.plan_file is None and not image:
                raise InputError(
                    "give a KERNEL (path or debian:cloud), --image, a --plan file, or --resume ID"
                )
            plan = build_plan(
                kernel=request.kernel,
                base_options=request.base_options,
                variant_texts=request.variant_texts,
                plan_file=request.plan_file,
                settings=settings,
            )
            result = start_experiment(
                plan, store, reporter, cancel=cancel, reprobe=reprobe, executor=executor, meta=labels
            )
        summary = summarize_run(store, result.experiment.id)
    seed_given = settings.seed is not None or resume is not None
    return RunOutcome(result, summary, store.name, seed_given)


def start_kexec(
    plan: KexecPlan,
    store: Store,
    reporter: Reporter | None = None,
    cancel: threading.Event | None = None,
    target: Target | None = None,
    reprobe: bool = False,
    executor: Executor | None = None,
) -> RunResult:
    """Create a kexec experiment for ``plan`` and run its chains on ``target`` (default: QEMU on this
    host), every kernel stored as soon as it is complete; return how it ended (``boots_run`` counts
    stored kernels, ``notes`` name ignored options). Raises like :func:`start_experiment`."""
    workload = KexecWorkload(plan)
    return runner.start(workload, target, store, reporter, None, cancel, reprobe, executor)


def start_ssh(
    plan: SshPlan,
    store: Store,
    reporter: Reporter | None = None,
    cancel: threading.Event | None = None,
    target: Target | None = None,
) -> RunResult:
    """Create an SSH reboot experiment for ``plan`` and reboot the machine slot by slot on ``target``
    (default: the SSH machine the plan names; a test's fake rebooting machine), every reboot stored
    as soon as it is read back; return how it ended. Raises BootError/InputError before anything is
    stored (SSH refuses, kexec cannot load, the machine is this one), BootError after storing a
    reboot the machine did not come back from, KeyboardInterrupt on Ctrl-C."""
    # The SSH client side: imported only when it runs. The runner opens the machine the plan names
    # (SshWorkload.where) unless ``target`` is that machine.
    from bootscope.lab.workloads.ssh import SshWorkload

    return runner.start(SshWorkload(plan), target, store, reporter, None, cancel)

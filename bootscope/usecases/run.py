"""The run use case: boot a plan's variants (the boot workload) on a target with the one runner.

``bootscope run``, ``sweep``, ``history`` and ``bisect-run`` all start or resume boot experiments
through these two functions; the loop itself is :mod:`bootscope.lab.runner`.
"""

from __future__ import annotations

import threading

from bootscope.lab import runner
from bootscope.lab.executors.local import Executor
from bootscope.lab.plans.boot import Plan
from bootscope.lab.plans.kexec import KexecPlan
from bootscope.lab.plans.ssh import SshPlan
from bootscope.lab.plans.stopping import StopRule
from bootscope.lab.progress import Reporter
from bootscope.lab.runner import RunResult
from bootscope.lab.targets.qemu import LocalQemu, Target
from bootscope.lab.workloads.boot import BootWorkload
from bootscope.lab.workloads.kexec import KexecWorkload
from bootscope.store import Store

__all__ = ["RunResult", "resume_experiment", "start_experiment", "start_kexec", "start_ssh"]


def start_experiment(
    plan: Plan,
    store: Store,
    reporter: Reporter | None = None,
    stop_rule: StopRule | None = None,
    cancel: threading.Event | None = None,
    target: Target | None = None,
    reprobe: bool = False,
    executor: Executor | None = None,
) -> RunResult:
    """Create the experiment for ``plan`` in ``store`` and boot it on ``target`` (default: QEMU on
    this host) with ``executor`` (default: this host's threads; see :func:`open_executor`); return
    how it ended. ``stop_rule`` overrides the rule that ``plan.until`` names;
    setting ``cancel`` (e.g. from a signal handler) stops the run as Ctrl-C does. Raises
    BootError/InputError before anything is stored (no kernel, bad options), StoreError if the store
    fails, KeyboardInterrupt on Ctrl-C (after marking the experiment interrupted). ``reprobe``
    redoes a remembered KVM probe."""
    workload = BootWorkload(plan)
    return runner.start(
        workload, target or LocalQemu(), store, reporter, stop_rule, cancel, reprobe, executor
    )


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
    return runner.resume(experiment_id, store, target or LocalQemu(), reporter, stop_rule, cancel, executor)


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
    return runner.start(workload, target or LocalQemu(), store, reporter, None, cancel, reprobe, executor)


def start_ssh(
    plan: SshPlan,
    store: Store,
    reporter: Reporter | None = None,
    cancel: threading.Event | None = None,
) -> RunResult:
    """Create an SSH reboot experiment for ``plan`` and reboot the machine slot by slot, every reboot
    stored as soon as it is read back; return how it ended. Raises BootError/InputError before
    anything is stored (SSH refuses, kexec cannot load, the machine is this one), BootError after
    storing a reboot the machine did not come back from, KeyboardInterrupt on Ctrl-C."""
    from bootscope.lab.workloads.ssh import SshWorkload  # the SSH client side: only when it runs

    return runner.start(SshWorkload(plan), LocalQemu(), store, reporter, None, cancel)

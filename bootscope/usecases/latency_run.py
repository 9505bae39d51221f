"""The latency run use case: ``bootscope latency run TARGET`` and ``--resume ID`` with the one runner.

TARGET ``local`` measures this host, ``ssh://USER@HOST[:PORT]`` a machine over SSH (both run
commands, so the tool runs there as it runs here), anything else is the kernel of a QEMU guest.
:func:`run_latency` builds the plan from the options as given (:class:`LatencyRequest`) and starts
it, or resumes a stored one on the place its plan names.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from bootscope.errors import InputError
from bootscope.lab import runner
from bootscope.lab.executors import open_executor
from bootscope.lab.plans.boot import resolve_seed
from bootscope.lab.plans.latency import LatencyPlan, build_latency_plan, duration_s
from bootscope.lab.plans.latency_tools import LatencySettings
from bootscope.lab.progress import Reporter
from bootscope.lab.runner import RunResult
from bootscope.lab.where import kind_of, parse_where
from bootscope.lab.workloads.latency import LatencyWorkload
from bootscope.store import Store


@dataclass(frozen=True, slots=True)
class LatencyRequest:
    """``latency run``'s options as given: TARGET (None with ``--resume``), the tool's settings
    (``duration`` as text: 60s), the variant texts, runs and warm-ups per variant, the seed (None:
    a fresh one), the accelerator, the guests' CPUs, and an SSH machine's key and known_hosts."""

    target: str | None
    tool: str = "cyclictest"
    duration: str = "60s"
    load: str = "none"
    interval_us: int = 200
    priority: int = 95
    histogram_us: int = 400
    variants: tuple[str, ...] = ()
    samples: int = 5
    warmup: int = 0
    seed: int | None = None
    accel: str | None = None
    allow_unequal: bool = False
    smp: int = 2
    identity: Path | None = None
    known_hosts: Path | None = None


def latency_plan(request: LatencyRequest) -> LatencyPlan:
    """Return the plan ``request`` describes (a machine's TARGET checked and written as stored: an
    SSH URL with its key files absolute, a board by its environment's absolute path). Raises
    InputError for bad options, a bad URL or a missing key or environment file."""
    target = request.target or ""
    identity = known_hosts = None
    if kind_of(target).machine:
        where = parse_where(target, request.identity, request.known_hosts)
        target, identity, known_hosts = where.address, where.identity, where.known_hosts
    base = LatencySettings(
        tool=request.tool,
        duration_s=duration_s(request.duration),
        interval_us=request.interval_us,
        priority=request.priority,
        histogram_us=request.histogram_us,
        load=request.load,
    )
    return build_latency_plan(
        target,
        base,
        request.variants,
        request.samples,
        resolve_seed(request.seed),
        request.warmup,
        request.accel or "auto",
        request.allow_unequal,
        request.smp,
        identity,
        known_hosts,
    )


def run_latency(
    request: LatencyRequest,
    resume: str | None,
    db: str,
    executor_spec: str | None = None,
    reporter: Reporter | None = None,
    cancel: threading.Event | None = None,
) -> RunResult:
    """Start the latency run ``request`` describes, or (``resume``: an experiment id) run the slots
    of a stored one that are not complete, on the place its plan names, in store ``db`` on the
    executor ``executor_spec`` names (None or ``local``: this host's threads); return how it ended.
    Raises InputError for a TARGET or variants with ``--resume``, no TARGET without it, or bad
    options; BootError (a missing tool or kernel, an unreachable scheduler) before anything is stored;
    StoreError; KeyboardInterrupt on Ctrl-C."""
    if resume is not None:
        if request.target or request.variants:
            raise InputError("--resume takes no TARGET or --variant: it reruns the stored plan")
    elif not request.target:
        raise InputError(
            "give a TARGET (local, ssh://USER@HOST, labgrid:ENV.yaml, debian:rt, a kernel path)"
            " or --resume ID"
        )
    with Store.open(db) as store, open_executor(executor_spec) as executor:
        if resume is not None:
            return runner.resume(resume, store, None, reporter, cancel=cancel, executor=executor)
        # The runner opens the machine the plan names (this host, an SSH machine, a board); a guest
        # boots on QEMU here.
        workload = LatencyWorkload(latency_plan(request))
        return runner.start(workload, None, store, reporter, cancel=cancel, executor=executor)

"""The kexec use case: build a kexec plan from what was given, run or resume it, and say whether
every kernel of every chain ended ok (``bootscope kexec``).

The run itself is :func:`bootscope.usecases.run.start_kexec` (the kexec workload on the one runner,
which stores every reboot as it completes); the summary is read back from the store.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from bootscope.errors import BootError
from bootscope.lab.executors import open_executor
from bootscope.lab.plans.kexec import (
    KexecPlan,
    KexecVariant,
    build_kexec_plan,
    build_variants,
    ignored_options,
)
from bootscope.lab.plans.settings import GivenSettings
from bootscope.lab.progress import Reporter
from bootscope.lab.qemu import kexec_chain as chain
from bootscope.lab.workloads.kexec import resolve_to
from bootscope.store import Store
from bootscope.usecases.run import RunOutcome, resume_experiment, start_kexec
from bootscope.usecases.summary import summarize_run


@dataclass(frozen=True, slots=True)
class KexecRequest:
    """What ``bootscope kexec`` was asked to run: QEMU boots ``from_spec``, then ``hops`` kexec reboots
    into ``to_spec`` per chain, ``chains`` chains per variant; the variants are the ``--variant``
    texts, else one per size of ``mem_sizes_mb`` (MiB; several: the trend), else the base."""

    from_spec: str
    to_spec: str
    hops: int
    chains: int
    settings: GivenSettings
    mem_sizes_mb: tuple[int, ...] = (chain.DEFAULT_KEXEC_MEM_MB,)
    variant_texts: tuple[str, ...] = ()
    smp: int = 1
    append: str = ""
    no_checks: bool = False
    file_load: bool = False


def kexec_plan(request: KexecRequest) -> KexecPlan:
    """Return the validated plan ``request`` describes (seed drawn at random when not given).
    Raises InputError naming the bad option (a bad variant, both --variant and --mem-sweep, -n or
    --chains below 1, a bad setting)."""
    base = KexecVariant(
        name="default",
        to=request.to_spec,
        options=chain.KexecOptions(file_load=request.file_load, no_checks=request.no_checks),
        mem_mb=request.mem_sizes_mb[0],
        smp=request.smp,
        append=request.append,
    )
    variants = build_variants(base, request.variant_texts, request.mem_sizes_mb)
    return build_kexec_plan(request.from_spec, variants, request.hops, request.chains, request.settings)


def plan_notes(plan: KexecPlan) -> list[str]:
    """Return the notes on options of ``plan`` that have no effect (``-i`` with ``-s``), per variant."""
    return [note for variant in plan.variants for note in ignored_options(variant)]


def write_chain_initramfs(to_spec: str, out: Path) -> Path:
    """Write the chain initramfs that kexecs into ``to_spec`` (for a real machine) to ``out``; return
    ``out``. Raises InputError for a missing TO kernel, BootError if kexec or busybox is missing."""
    return chain.write_initramfs(chain.build_chain_initramfs(resolve_to(to_spec)[0]), out)


def run_kexec(
    plan: KexecPlan | None,
    *,
    db: str,
    resume: str | None = None,
    executor_spec: str | None = None,
    jobs: int | None = None,
    reporter: Reporter | None = None,
    cancel: threading.Event | None = None,
    seed_given: bool = False,
) -> RunOutcome:
    """Run ``plan`` (or, when None, resume stored experiment ``resume``) in store ``db`` on the
    executor ``executor_spec`` names; return the outcome with its summary (``seed_given`` passed on
    for the report). Raises BootError, InputError, StoreError and KeyboardInterrupt as the runner
    does."""
    with Store.open(db) as store, open_executor(executor_spec, jobs) as executor:
        if plan is None:
            assert resume is not None, "run_kexec needs a plan or a run to resume"
            result = resume_experiment(resume, store, reporter, cancel=cancel, executor=executor)
        else:
            result = start_kexec(plan, store, reporter, cancel, executor=executor)
        summary = summarize_run(store, result.experiment.id)
    return RunOutcome(result, summary, store.name, seed_given)


def kexec_failure(outcome: RunOutcome) -> BootError | None:
    """Return the error that ends ``bootscope kexec`` with exit status 3 when any kernel of any chain
    failed (kexec-error, timeout, panic; all of them are stored), None when every kernel ended ok."""
    summary = outcome.summary
    if not summary.failed:
        return None
    return BootError(
        f"{len(summary.failed)} of {summary.stored} kernels of run {outcome.result.experiment.id} failed"
        f" ({', '.join(sorted({boot.outcome for boot in summary.failed}))}); all are stored"
    )

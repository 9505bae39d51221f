"""``git bisect run`` support: build, boot, and call the commit good, bad, or untestable.

The decision (``bootscope.stats.decision.decide``, shared with ``check``) asks two one-sided
questions about the shift (candidate minus baseline) against the margin m = threshold x
median(baseline), each a Mann-Whitney test of (candidate - m) against the baseline:

- bad: the candidate is slower than the baseline by more than m;
- good: the candidate is slower by less than m, or faster;
- neither: boot more, up to ``max_n``.

Every look at the data is one more chance of a false call, so alpha is split evenly over the looks
that ``n`` and ``max_n`` allow (Bonferroni). When no look decides, the commit is skipped (exit 125)
rather than guessed, because one wrong good/bad sends ``git bisect`` down the wrong half for good.
"""

from __future__ import annotations

import math
import shlex
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

from bootscope import defaults, metrics
from bootscope.amounts import parse_fraction
from bootscope.errors import BootError, BootscopeError, InputError, StatsError
from bootscope.lab.plans.boot import Plan, VariantSpec, plan_from_dict, validate_plan
from bootscope.lab.plans.settings import check_settings
from bootscope.lab.progress import Reporter
from bootscope.stats.decision import BAD, GOOD, UNKNOWN, BisectDecision, decide
from bootscope.store import Store
from bootscope.usecases.run import start_experiment

# git bisect run: 0 good, 1..127 except 125 bad, 125 skip, anything else (>= 128) aborts the bisect.
EXIT_GOOD, EXIT_BAD, EXIT_SKIP, EXIT_ABORT = 0, 1, 125, 128


def parse_threshold(text: str) -> float:
    """Return the relative threshold that ``5%`` or ``0.05`` means, as a fraction (0.05).

    Raises InputError unless it is a number with an optional ``%`` between 0 and 100 %.
    """
    return parse_fraction(text, "--threshold", allow_zero=True)


def looks_allowed(n: int, max_n: int) -> int:
    """Return how many times the samples are examined when batches of ``n`` boots go up to ``max_n``.

    Raises InputError when n < 2 or max_n < n.
    """
    if n < 2:
        raise InputError(f"-n must be at least 2 (got {n})")
    if max_n < n:
        raise InputError(f"--max-n ({max_n}) must be at least -n ({n})")
    return 1 + math.ceil((max_n - n) / n)


def exit_code(verdict: str) -> int:
    """Return the ``git bisect run`` exit code for a verdict (0 good, 1 bad, 125 skip)."""
    return {GOOD: EXIT_GOOD, BAD: EXIT_BAD}.get(verdict, EXIT_SKIP)


def run_build(command: str, cwd: Path, log: Path | None = None) -> tuple[bool, str]:
    """Run the user's build command through the shell in ``cwd``; return (succeeded, last output lines).

    The command is the user's own (like ``make -j8 bzImage``), so a shell is what they expect.
    Raises nothing: a build that cannot start counts as failed.
    """
    try:
        done = subprocess.run(
            command,
            shell=True,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            check=False,
        )
    except OSError as error:
        return False, f"cannot run {shlex.quote(command)}: {error.strerror}"
    output = done.stdout.decode("utf-8", "replace")
    if log is not None:
        log.write_text(output, encoding="utf-8")
    tail = "\n".join(output.splitlines()[-5:])
    return done.returncode == 0, tail


@dataclass(frozen=True, slots=True)
class Baseline:
    """The stored reference: its run id, variant (the machine to boot the candidate on) and samples."""

    run: int
    variant: VariantSpec
    samples: tuple[float, ...]
    seed: int


@dataclass(frozen=True, slots=True)
class BisectOutcome:
    """One commit's answer: verdict, exit code, every decision taken, the runs that hold its boots,
    and a one-line message for the user."""

    verdict: str
    exit_code: int
    decisions: tuple[BisectDecision, ...]
    runs: tuple[int, ...]
    message: str


def load_reference(store: Store, text: str, metric: str) -> Baseline:
    """Return the reference (the good kernel's boots, the baseline of every comparison) that
    ``RUN:VARIANT`` names (RUN: an id or ``latest``), with its ok boots.

    Raises InputError for a malformed text, an unknown variant, or fewer than 2 samples; StoreError
    for an unknown run."""
    run, colon, variant_name = text.rpartition(":")
    if not colon or not run or not variant_name:
        raise InputError(f"--reference {text!r}: expected RUN:VARIANT, e.g. 3:default")
    record = store.experiment(run)
    plan = plan_from_dict(record.plan)
    variants = {variant.name: variant for variant in plan.variants}
    if variant_name not in variants:
        raise InputError(
            f"--reference: run {record.id} has no variant {variant_name!r} (variants: {', '.join(variants)})"
        )
    samples = store.samples(record.id, metric).get(variant_name, [])
    if len(samples) < 2:
        raise InputError(
            f"--reference {text}: {len(samples)} ok boot(s) with {metric}; a comparison needs at least 2"
        )
    return Baseline(record.id, variants[variant_name], tuple(samples), record.seed)


def candidate_plan(
    baseline: Baseline,
    kernel: Path,
    append: str | None,
    n: int,
    warmup: int,
    seed: int,
    timeout_s: float | None = None,
    jobs: int = 1,
) -> Plan:
    """Return the plan of one batch: the baseline's machine with the candidate kernel (and command
    line, when given), ``n`` boots after ``warmup``, each given ``timeout_s`` seconds (None: the
    default), ``jobs`` of them at once. Raises InputError if it is not valid."""
    variant = replace(baseline.variant, name="candidate", kernel=str(kernel.resolve()))
    if append is not None:
        variant = replace(variant, append=append)
    return validate_plan(
        Plan(
            variants=(variant,),
            seed=seed,
            samples_per_variant=n,
            warmup_per_variant=warmup,
            timeout_s=defaults.BOOT_TIMEOUT_S if timeout_s is None else timeout_s,
            jobs=jobs,
        )
    )


def bisect_commit(
    *,
    store: Store,
    baseline: Baseline,
    kernel: Path,
    append: str | None,
    metric: str,
    threshold: float,
    alpha: float,
    n: int,
    max_n: int,
    warmup: int = 0,
    timeout_s: float | None = None,
    reporter: Reporter | None = None,
    jobs: int = 1,
) -> BisectOutcome:
    """Boot the built ``kernel`` in batches of ``n`` (up to ``max_n`` in all, ``jobs`` at once), each
    batch a stored run, until :func:`decide` says good or bad; return the outcome (exit code 0, 1, or
    125 when it cannot tell). Raises InputError for bad counts or a missing kernel; BootError if QEMU
    cannot run."""
    looks = looks_allowed(n, max_n)
    if not kernel.is_file():
        raise InputError(f"--kernel {kernel}: no such file after the build")
    samples: list[float] = []
    decisions: list[BisectDecision] = []
    runs: list[int] = []
    booted = 0
    while booted < max_n:
        batch = min(n, max_n - booted)
        seed = baseline.seed + len(runs) + 1
        plan = candidate_plan(baseline, kernel, append, batch, warmup, seed, timeout_s, jobs)
        result = start_experiment(plan, store, reporter)
        runs.append(result.experiment.id)
        booted += batch
        samples += store.samples(result.experiment.id, metric).get("candidate", [])
        if len(samples) < 2:
            continue
        decision = decide(baseline.samples, samples, threshold, alpha, looks)
        decisions.append(decision)
        if decision.verdict != UNKNOWN:
            break
    if not decisions:
        message = f"{booted} boot(s), fewer than 2 reached {metric}: cannot test this commit"
        return BisectOutcome(UNKNOWN, EXIT_SKIP, (), tuple(runs), message)
    last = decisions[-1]
    ci = f" [{last.shift_ci[0]:+.3f}, {last.shift_ci[1]:+.3f}]" if last.shift_ci else ""
    summary = (
        f"{metric}: shift {last.shift:+.3f} s{ci} vs margin {last.margin:.3f} s "
        f"({threshold:.1%} of the baseline median), n = {last.n_candidate} vs {last.n_baseline}"
    )
    if last.verdict == BAD:
        message = f"bad: slower by more than the threshold (p = {last.p_bad:.3g}); {summary}"
    elif last.verdict == GOOD:
        message = f"good: not slower by more than the threshold (p = {last.p_good:.3g}); {summary}"
    else:
        message = f"cannot tell after {last.n_candidate} boots (--max-n {max_n}); skipping; {summary}"
    return BisectOutcome(last.verdict, exit_code(last.verdict), tuple(decisions), tuple(runs), message)


@dataclass(frozen=True, slots=True)
class BisectRequest:
    """What ``bootscope bisect-run`` was asked for at one commit: run ``build`` (a shell command, in
    the working directory), boot ``kernel`` in batches of ``n`` up to ``max_n`` boots (``warmup``
    warm-ups and ``timeout_s`` seconds each), with ``append`` or the command line in
    ``append_file``, and compare ``metric`` with the reference ``RUN:VARIANT`` at ``threshold`` (text:
    ``5%`` or ``0.05``) and ``alpha``, ``jobs`` boots at once. ``old_baseline`` is the value of the
    deprecated ``--baseline`` (the same as ``--reference``), None when not given."""

    reference: str | None
    kernel: Path
    metric: str = metrics.DEFAULT_METRIC
    threshold: str = "5%"
    n: int = 6
    max_n: int = 24
    build: str | None = None
    append: str | None = None
    append_file: Path | None = None
    alpha: float = defaults.ALPHA
    warmup: int = 0
    timeout_s: float | None = None
    old_baseline: str | None = None
    jobs: int = 1


@dataclass(frozen=True, slots=True)
class BisectAnswer:
    """What ``git bisect run`` is told: a one-line message and the exit code (0 good, 1 bad, 125
    skip, 128 abort the bisect)."""

    message: str
    exit_code: int


def bisect_step(request: BisectRequest, db: str, cwd: Path, reporter: Reporter | None = None) -> BisectAnswer:
    """Answer ``git bisect run`` for the commit checked out in ``cwd``: build it, boot it, compare it
    with the reference in store ``db``; return the message and exit code. Raises nothing: bad options,
    a bad reference or store abort the bisect (128), since every commit would fail alike; a failed
    build, a kernel that does not boot or too few boots skip the commit (125)."""
    try:
        reference = _reference(request)
        threshold = parse_threshold(request.threshold)
        metrics.definition(request.metric)
        looks_allowed(request.n, request.max_n)
        check_settings(jobs=request.jobs, warmup_per_variant=request.warmup, timeout_s=request.timeout_s)
    except BootscopeError as error:
        return BisectAnswer(f"error: {error}", EXIT_ABORT)
    if request.build:
        ok, tail = run_build(request.build, cwd)
        if not ok:
            return BisectAnswer(f"build failed, skipping this commit: {tail}", EXIT_SKIP)
    try:
        command_line = request.append
        if request.append_file is not None:
            try:
                command_line = request.append_file.read_text(encoding="utf-8").strip()
            except OSError as error:
                raise BootError(f"--append-file {request.append_file}: {error.strerror}") from None
        with Store.open(db) as store:
            good = load_reference(store, reference, request.metric)
            outcome = bisect_commit(
                store=store, baseline=good, kernel=request.kernel, append=command_line, metric=request.metric,
                threshold=threshold, alpha=request.alpha, n=request.n, max_n=request.max_n,
                warmup=request.warmup, timeout_s=request.timeout_s, reporter=reporter, jobs=request.jobs,
            )  # fmt: skip
    except (BootError, StatsError) as error:
        # This commit cannot be measured (it does not boot, or too few boots finished): skip it.
        return BisectAnswer(f"cannot test this commit, skipping: {error}", EXIT_SKIP)
    except BootscopeError as error:
        # Bad reference, store or options: every commit would fail alike, so stop the bisect.
        return BisectAnswer(f"error: {error}", EXIT_ABORT)
    return BisectAnswer(f"{outcome.message} (runs {', '.join(map(str, outcome.runs))})", outcome.exit_code)


def _reference(request: BisectRequest) -> str:
    """Return the reference ``RUN:VARIANT`` from --reference or the deprecated --baseline; raises
    InputError when they disagree or neither names a RUN:VARIANT."""
    reference = request.reference
    if request.old_baseline is not None:
        if reference not in (None, request.old_baseline):
            raise InputError(f"--baseline {request.old_baseline} and --reference {reference} disagree")
        reference = request.old_baseline
    if reference is None or ":" not in reference:
        raise InputError("--reference RUN:VARIANT is required (a stored run of the good kernel)")
    return reference

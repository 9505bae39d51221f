"""`bootscope tune`: boot the baseline once and read it for sinks, try every knob it gives a reason
to try against the baseline (interleaved, ``n`` boots an arm and stage), keep the knobs whose
whole interval is a saving and whose boots are still the same system, then boot the combination of
the kept knobs against the baseline (a final A/B; skipped when one knob is kept, its screen being
that A/B) and report the combined saving beside the sum of the single ones (knobs overlap).

The screen spends boots in stages on the knobs still undecided (``screen.py``). Every boot is a
stored run on the one runner (labelled ``tune=probe|screen|final``; the probe keeps the request,
the later runs name the probe, ``tune_of``), so Ctrl-C or a crash loses no finished boot and
:func:`resume_tune` goes on from them (``resume.py``). A system image (``--image``) is tuned like
a kernel: systemd's critical chain and blame give ``systemd.mask=`` knobs, and a knob asked for
with ``--try`` is tried whatever the catalogue says. A labgrid board is tuned by kexec reboots or
boots from power-on, each arm with its whole command line (``board.py``); a machine over SSH by
kexec reboots (``ssh.py``).
A stored tune is read again without booting for the HTML report (``stored.py``).
A QEMU guest's knobs may also add QEMU options (``qemu_knobs.py``: devices of its machine).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from bootscope.analyze.stored import analyze_stored_boot
from bootscope.errors import BootError, InputError
from bootscope.lab.executors.local import Executor
from bootscope.lab.plans.boot import Plan, VariantSpec, apply_option
from bootscope.lab.progress import Reporter
from bootscope.metrics import definition, unit_of
from bootscope.store import Store
from bootscope.usecases.run import resume_experiment, start_experiment
from bootscope.usecases.tune.account import where_saved
from bootscope.usecases.tune.catalogue import candidates
from bootscope.usecases.tune.decide import SAVING, Verdict
from bootscope.usecases.tune.knob import Knob, compatible, given_knob, knobs_arm
from bootscope.usecases.tune.machines import adapter_for
from bootscope.usecases.tune.pareto import FrontPoint, pareto_front
from bootscope.usecases.tune.request import TuneRequest, check_reboot
from bootscope.usecases.tune.resume import (
    PROBE,
    REQUEST,
    TUNE,
    TUNE_OF,
    Replay,
    probe_of,
    request_document,
    request_from_document,
    runs_of,
)
from bootscope.usecases.tune.screen import (
    BASELINE,
    Runner,
    TriedKnob,
    arms_of,
    first_stage_boots,
    judge_arm,
    plan_of,
    screen,
)

TUNED = "tuned"
MIN_BOOTS_PER_ARM = 4  # the fewest a side that give a 95% interval of a shift (Mann-Whitney)


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The tuned command line (every kept knob applied), its knobs, its own A/B against the baseline
    and the sum of the kept knobs' single savings; ``combination`` says why it is one knob when the
    kept knobs together broke the system or showed no saving ('' otherwise); ``qemu_args``: the QEMU
    options the recommended knobs add to the guest's machine; ``left_out``: kept knobs left out of
    the combination because a better one sets the same thing (another machine type)."""

    append: str
    knobs: tuple[str, ...]
    verdict: Verdict
    sum_of_singles: float
    combination: str = ""
    qemu_args: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TuneResult:
    """A finished tune: the metric and its unit, the baseline's command line and median, every knob
    tried (in the catalogue's order) and those the budget left untried, the recommendation (None
    when no knob saved time), the boots spent, the stored runs, the --only names given and the
    Pareto front of saving against risk."""

    metric: str
    unit: str
    baseline_append: str
    baseline_median: float | None
    tried: tuple[TriedKnob, ...]
    untried: tuple[Knob, ...]
    recommended: Recommendation | None
    boots_spent: int
    runs: tuple[int, ...]
    only: tuple[str, ...] = ()
    front: tuple[FrontPoint, ...] = ()


def base_spec(request: TuneRequest) -> VariantSpec:
    """Return the baseline's variant: the kernel, the machine options and the command line."""
    # a board or a machine boots its own kernel: the variant names where it runs
    spec = VariantSpec(name=BASELINE, kernel=request.where.address if request.where else "")
    if request.image:
        spec = apply_option(spec, "image", request.image)
    if request.kernel:
        spec = apply_option(spec, "kernel", request.kernel)
    for option, value in (request.machine or {}).items():
        if value is not None:
            spec = apply_option(spec, option, value)
    return replace(spec, append=request.append)


def _judged(store: Store, run: int, name: str, request: TuneRequest) -> Verdict:
    records, logs = arms_of(store, run)
    samples = store.samples(run, request.metric)
    values = (samples.get(BASELINE, []), samples.get(name, []))
    return judge_arm(records, logs, name, values, len(records.get(name, [])), request)


def _fit_budget(knobs: list[Knob], request: TuneRequest) -> tuple[list[Knob], list[Knob]]:
    if request.budget is None:
        return knobs, []
    n = request.boots_per_arm
    # the probe, the first stage, a final A/B; at least one knob fits (`tune` checked)
    fits = 1
    while fits < len(knobs) and 1 + first_stage_boots(n, fits + 1) + 2 * n <= request.budget:
        fits += 1
    return knobs[:fits], knobs[fits:]


def asked_knobs(words: Sequence[str]) -> list[Knob]:
    """Return the knobs asked for with --try, in order, each once. Raises InputError for a word that
    is not one command-line word."""
    knobs: dict[str, Knob] = {}
    for word in words:
        try:
            knob = given_knob(word)
        except ValueError as error:
            raise InputError(str(error)) from None
        knobs.setdefault(knob.name, knob)
    return list(knobs.values())


def _probe(
    store: Store, request: TuneRequest, base: VariantSpec, run: Runner, asked: Sequence[Knob]
) -> tuple[int, list[Knob], float | None]:
    probe = run(plan_of([base], request, 1), {TUNE: PROBE, REQUEST: request_document(request)})
    ok = [b for b in store.boots(probe) if b.final_ok]
    if not ok:
        raise BootError(f"the baseline did not boot (run {probe}): see `bootscope runs` and its log")
    seen = analyze_stored_boot(store, probe, ok[0].index)
    knobs = candidates(
        request.append,
        seen.analysis.breakdown,
        seen.analysis.lines,
        request.metric,
        request.allow,
        request.only,
        None if request.where else base.qemu_args,
    )
    names = {knob.name for knob in knobs}
    knobs += [knob for knob in asked if knob.name not in names]
    value = ok[0].metrics.get(request.metric)
    return probe, knobs, None if value is None else float(value)


def _recommend(
    store: Store, request: TuneRequest, base: VariantSpec, kept: Sequence[TriedKnob], run: Runner
) -> tuple[Recommendation, list[int]]:
    """The kept knobs together against the baseline (one kept knob: its screen was that A/B); a knob
    that sets what a better kept knob sets (another machine type, the same word) is left out of the
    combination, saying so; when the combination breaks the system or shows no saving, the best
    single knob, saying so."""
    ranked = sorted(kept, key=lambda t: -(t.verdict.saving or 0.0))
    chosen, left = compatible([t.knob for t in ranked])
    kept = [t for t in ranked if t.knob in chosen]
    out = tuple(knob.name for knob in left)
    best = kept[0]
    total = sum(t.verdict.saving or 0.0 for t in kept)
    alone = best.knob.apply(request.append), (best.knob.name,), best.verdict, total
    if len(kept) == 1:
        return Recommendation(*alone, qemu_args=best.knob.qemu_args, left_out=out), []
    tuned = knobs_arm(base, [t.knob for t in kept], request.append, TUNED)
    final = run(plan_of([base, tuned], request, request.boots_per_arm), {"tune": "final"})
    verdict = _judged(store, final, TUNED, request)
    names = tuple(t.knob.name for t in kept)
    added = tuple(arg for t in kept for arg in t.knob.qemu_args)
    if verdict.decision == SAVING:
        return Recommendation(tuned.append, names, verdict, total, qemu_args=added, left_out=out), [final]
    note = f"together ({' '.join(names)}): {verdict.decision}" + (f", {verdict.why}" if verdict.why else "")
    return Recommendation(*alone, note, qemu_args=best.knob.qemu_args, left_out=out), [final]


def _accounted(store: Store, request: TuneRequest, tried: TriedKnob) -> TriedKnob:
    """Return ``tried`` with where its saving came from, for a kept knob."""
    if tried.verdict.decision != SAVING or tried.last_run is None:
        return tried
    where = where_saved(store, tried.last_run, tried.arm, BASELINE, request.metric, request.alpha)
    return replace(tried, where=where)


def booting(
    store: Store, reporter: Reporter | None, executor: Executor | None, request: TuneRequest | None = None
) -> Runner:
    """Return the runner that boots a plan on the one runner (QEMU on this host, or ``executor``;
    the board of ``request`` when it names one: kexec reboots)."""
    if request is not None and request.where is not None:
        return adapter_for(request).runner(request, store, reporter)

    def boot(plan: Plan, meta: dict[str, str]) -> int:
        return start_experiment(plan, store, reporter, executor=executor, meta=meta).experiment.id

    return boot


def tune_target(request: TuneRequest, store: Store, reporter: Reporter | None = None) -> TuneResult:
    """Run the tune ``request`` describes on its target: a board's or an SSH machine's own command
    line read first as the baseline (``board.board_request``, ``ssh.ssh_request``), then
    :func:`tune`. Raises like :func:`tune`, and BootError when the board or machine cannot be
    reached."""
    check_reboot(request)
    if request.where is not None:
        request = adapter_for(request).baseline(request)
    return tune(request, store, reporter)


def resume_tune(
    given: str,
    store: Store,
    reporter: Reporter | None = None,
    executor: Executor | None = None,
    runner: Runner | None = None,
    finish: Callable[[int], None] | None = None,
) -> TuneResult:
    """Go on with the stored tune ``given`` names (its first run's id, or 'latest'): its request
    is the stored one, its stored runs are taken in order (one cut short is finished by ``finish``,
    default: resumed on this host or ``executor``) and the search boots what they lack. Raises like
    :func:`tune`, and InputError when ``given`` names no tune or its runs took another way."""
    probe = probe_of(store, given)
    request = request_from_document(probe.meta[REQUEST])

    def resume(run_id: int) -> None:
        resume_experiment(run_id, store, reporter, executor=executor)

    boot = runner or booting(store, reporter, executor, request)
    replay = Replay(runs_of(store, probe), boot, finish or resume)
    return tune(request, store, reporter, executor, runner=replay)


def tune(
    request: TuneRequest,
    store: Store,
    reporter: Reporter | None = None,
    executor: Executor | None = None,
    runner: Runner | None = None,
) -> TuneResult:
    """Run the tune ``request`` describes, every boot stored in ``store``; return what it found.
    ``runner`` boots a plan and returns its stored run (default: the one runner, QEMU on this host,
    with ``executor``; tests of the search give their own). Raises InputError for a bad request,
    BootError when the baseline does not boot, StoreError, and KeyboardInterrupt on Ctrl-C (the
    boots finished stay stored)."""
    definition(request.metric)
    if request.boots_per_arm < MIN_BOOTS_PER_ARM:
        raise InputError(
            f"-n {request.boots_per_arm}: a knob needs at least {MIN_BOOTS_PER_ARM} boots an arm"
        )

    asked = asked_knobs(request.tries)  # a bad --try word is refused before any boot
    machine = next((k.name for k in asked if k.qemu_args), None)
    if machine and request.where is not None:
        raise InputError(f"--try {machine}: a QEMU machine knob, and this tune boots no QEMU guest")
    first = runner or booting(store, reporter, executor, request)
    if request.budget is not None and request.budget < 1 + 4 * request.boots_per_arm:
        n = request.boots_per_arm
        raise InputError(f"--budget {request.budget}: one knob needs {1 + 4 * n} boots at -n {n}")
    base = base_spec(request)
    probe, knobs, probe_value = _probe(store, request, base, first, asked)

    def run(plan: Plan, meta: dict[str, str]) -> int:  # every later run names its tune's probe
        return first(plan, {**meta, TUNE_OF: str(probe)})

    tried_knobs, untried = _fit_budget(knobs, request)
    runs = [probe]
    tried: tuple[TriedKnob, ...] = ()
    median = probe_value
    if tried_knobs:
        n = request.boots_per_arm
        # the stages may spend what the budget leaves after the probe and a final A/B
        left = None if request.budget is None else request.budget - 1 - 2 * n
        floor = request.min_saving
        if floor is None:
            floor = request.min_saving_fraction * abs(probe_value or 0.0)
        screened = screen(store, request, base, tried_knobs, run, left, floor)
        runs += screened.runs
        tried = screened.tried
        median = statistics.median(screened.baseline_values) if screened.baseline_values else None
    tried = tuple(_accounted(store, request, t) for t in tried)
    kept = [t for t in tried if t.verdict.decision == SAVING]
    recommended = None
    if kept:
        recommended, final = _recommend(store, request, base, kept, run)
        runs += final
    spent = sum(len(store.boots(r)) for r in runs)
    return TuneResult(
        request.metric, unit_of(request.metric), request.append, median, tuple(tried), tuple(untried),
        recommended, spent, tuple(runs), request.only, pareto_front(tried),
    )  # fmt: skip

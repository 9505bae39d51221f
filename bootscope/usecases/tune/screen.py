"""The screen of `bootscope tune`: every knob against the baseline, in stages that spend boots where
they still decide something.

Stage 1 boots the baseline and every knob, interleaved: ``n`` boots an arm, or, with three knobs or
more, a first look of ``ceil(n / 2)`` boots a knob against four times as many of the one shared
baseline (each knob still has n * n pairs of boots to compare, and its interval is about as wide as
n against n: ``bench/RESULTS.md``, "the first look"; the sweep of one knob at a time pays a
baseline arm for every knob). Later stages boot ``n`` an arm. A knob is settled when
its boots are not the same system (rejected), when the whole interval of its saving is above zero
(a saving) or below it (slower), or when the interval's top is below the smallest saving worth having
(``min_saving``: no useful saving, dropped). The others go on to the next stage with the baseline
again, their boots pooled stage by stage with the baseline's of the same stages; after
``MAX_STAGES``, or when the budget cannot pay for another stage, a knob still open is "no saving
shown". A verdict is never taken on a p-value crossing a line: only the interval of the pooled
boots decides, and a stage is a fixed number of boots.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from bootscope.lab.plans.boot import Plan, VariantSpec, plan_with_settings, validate_plan
from bootscope.metrics import unit_of
from bootscope.model import LogLine
from bootscope.store import Store
from bootscope.store.records import BootRecord
from bootscope.usecases.tune.account import Moved
from bootscope.usecases.tune.decide import (
    NO_SAVING,
    REJECTED,
    SAVING,
    SLOWER,
    Verdict,
    judge,
    rejected,
    same_system,
)
from bootscope.usecases.tune.knob import Knob, knobs_arm
from bootscope.usecases.tune.request import TuneRequest

BASELINE = "baseline"
MAX_STAGES = 3
# The first look: with this many knobs or more, each knob's boots halved against a baseline booted
# this many times a round (cheaper than n a knob from three knobs on: n/2 * (4 + k) < n * (1 + k)).
FIRST_LOOK_KNOBS = 3
FIRST_LOOK_BASELINE_TIMES = 4
Runner = Callable[[Plan, dict[str, str]], int]


@dataclass(frozen=True, slots=True)
class TriedKnob:
    """A knob and what its boots said: the verdict, the stored run of its last stage and arm name
    there (None, '' before it was booted), and, for a kept knob, where its saving came from."""

    knob: Knob
    verdict: Verdict
    last_run: int | None = None
    arm: str = ""
    where: tuple[Moved, ...] = ()


@dataclass(frozen=True, slots=True)
class Screened:
    """The screen's outcome: every knob's verdict (in the knobs' order), the stored runs of its
    stages, and the baseline's values over all of them."""

    tried: tuple[TriedKnob, ...]
    runs: tuple[int, ...]
    baseline_values: tuple[float, ...]


def plan_of(
    variants: Sequence[VariantSpec], request: TuneRequest, samples: int, baseline_times: int = 1
) -> Plan:
    """Return the plan that boots ``variants``, ``samples`` boots each (the first, the baseline,
    ``baseline_times`` as many), with ``request``'s run settings. Raises InputError for a plan that
    cannot run."""
    settings = replace(request.settings, samples_per_variant=samples)
    plan = plan_with_settings(variants[:1], settings)
    more = ((variants[0].name, baseline_times),) if baseline_times > 1 else ()
    return validate_plan(replace(plan, variants=tuple(variants), slots_a_round=more))


def first_look(n: int, knobs: int) -> tuple[int, int]:
    """Return the first stage's boots a knob and the baseline's times as many, for ``knobs`` knobs
    at ``n`` boots an arm: (n, 1) for fewer than FIRST_LOOK_KNOBS, else (ceil(n / 2), 4)."""
    if knobs < FIRST_LOOK_KNOBS:
        return n, 1
    return max(2, -(-n // 2)), FIRST_LOOK_BASELINE_TIMES


def first_stage_boots(n: int, knobs: int) -> int:
    """Return the boots of the first stage for ``knobs`` knobs at ``n`` boots an arm."""
    samples, times = first_look(n, knobs)
    return samples * (times + knobs)


def arms_of(store: Store, run: int) -> tuple[dict[str, list[BootRecord]], dict[str, list[list[LogLine]]]]:
    """Return run ``run``'s final, measured boots and their logs, per variant."""
    records: dict[str, list[BootRecord]] = {}
    logs: dict[str, list[list[LogLine]]] = {}
    for boot in store.boots(run):
        if boot.superseded or boot.warmup:
            continue
        records.setdefault(boot.variant, []).append(boot)
        logs.setdefault(boot.variant, []).append(store.boot_log(run, boot.index))
    return records, logs


def judge_arm(
    records: Mapping[str, Sequence[BootRecord]],
    logs: Mapping[str, Sequence[Sequence[LogLine]]],
    name: str,
    values: tuple[Sequence[float], Sequence[float]],
    boots: int,
    request: TuneRequest,
) -> Verdict:
    """Return arm ``name``'s verdict against the baseline: rejected (with what broke) when its boots
    of this run (``records``, ``logs``) are not the same system as the baseline's, else the saving
    of ``values`` (the baseline's and the arm's, pooled over the stages so far); ``boots``: the
    arm's boots so far."""
    broke = same_system(
        records.get(BASELINE, []), records.get(name, []), logs.get(BASELINE, []), logs.get(name, []),
        request.metric,
    )  # fmt: skip
    if broke:
        return rejected(broke, boots)
    return judge(values[0], values[1], request.metric, unit_of(request.metric), request.alpha)


def _settled(verdict: Verdict, min_saving: float, unit: str) -> Verdict | None:
    if verdict.decision in (SAVING, SLOWER):
        return verdict
    top = verdict.top()
    if top is not None and top < min_saving:
        return replace(verdict, why=f"its interval rules out a saving of {min_saving:.4g} {unit} or more")
    return None


def screen(
    store: Store,
    request: TuneRequest,
    base: VariantSpec,
    knobs: Sequence[Knob],
    run: Runner,
    boots_left: int | None,
    min_saving: float,
) -> Screened:
    """Screen ``knobs`` against ``base`` (see the module's docstring) with ``run`` booting each
    stage's plan; ``boots_left``: the boots the stages may spend (None: no cap; the first stage is
    always booted)."""
    metric, n, append = request.metric, request.boots_per_arm, request.append
    pending = list(enumerate(knobs, 1))
    pooled: dict[int, tuple[list[float], list[float]]] = {i: ([], []) for i, _ in pending}
    booted: dict[int, int] = dict.fromkeys(pooled, 0)
    verdicts: dict[int, Verdict] = {}
    last_run: dict[int, int] = {}
    runs: list[int] = []
    all_base: list[float] = []
    for stage in range(1, MAX_STAGES + 1):
        boots, times = first_look(n, len(pending)) if stage == 1 else (n, 1)
        cost = boots * (times + len(pending))
        if not pending or (stage > 1 and boots_left is not None and cost > boots_left):
            break
        arms = [base, *(knobs_arm(base, [k], append, f"k{i}") for i, k in pending)]
        stage_run = run(plan_of(arms, request, boots, times), {"tune": "screen", "stage": str(stage)})
        runs.append(stage_run)
        boots_left = None if boots_left is None else boots_left - cost
        records, logs = arms_of(store, stage_run)
        samples = store.samples(stage_run, metric)
        all_base += samples.get(BASELINE, [])
        still = []
        for i, knob in pending:
            name = f"k{i}"
            booted[i] += len(records.get(name, []))
            last_run[i] = stage_run
            pooled[i][0].extend(samples.get(BASELINE, []))
            pooled[i][1].extend(samples.get(name, []))
            verdicts[i] = judge_arm(records, logs, name, pooled[i], booted[i], request)
            if verdicts[i].decision == REJECTED:
                continue
            settled = _settled(verdicts[i], min_saving, unit_of(metric))
            if settled is None:
                still.append((i, knob))
            else:
                verdicts[i] = settled
        pending = still
    for i, _ in pending:
        verdicts[i] = replace(
            verdicts[i], decision=NO_SAVING, why=f"its interval holds zero after {booted[i]} boots"
        )
    tried = tuple(
        TriedKnob(knob, verdicts[i], last_run.get(i), f"k{i}")
        for i, knob in enumerate(knobs, 1)
        if i in verdicts
    )
    return Screened(tried, tuple(runs), tuple(all_base))

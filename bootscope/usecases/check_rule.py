"""``check``'s rule: new boots against a reference, decided as CI needs it (exit 0 pass, 1
regression, 125 cannot tell).

The total (``--metric``) is decided with bisect-run's three-way rule (``bootscope.stats.decision``)
with margin m = max(threshold x the reference median, the reference's resolution for as many boots
as were given) (``bootscope.stats.resolution``). The resolution is the smallest margin a check of
these sizes can prove: with a margin inside the boots' own spread, an unchanged kernel could never
be shown "not slower", and the gate would answer "cannot tell" forever. So:

- *pass* (0): the new boots are proven not slower than the reference by more than m; the result
  says when m is wider than the threshold asked for, and how many boots would resolve that;
- *regression* (1): the total is proven slower by more than m, or a component is (below);
- *cannot tell* (125): neither, with how many more boots would settle it (a seeded resampling of
  the new boots: the same boots give the same answer).

Each component asks the "bad" question with a margin of max(threshold x its reference median,
``min_shift_s``); their p-values are Benjamini-Hochberg adjusted, since hundreds of components are
hundreds of chances of a false alarm. A component absent from the reference that now takes more than
threshold x the total's median on its own is a regression too, unless the two sides print
differently (``initcall_debug`` on one side: its initcalls appear because of the option). Boots that
differ from the reference's in more than the kernel (release, instrumentation, CPUs, memory,
machine: ``bootscope.analyze.like_for_like``) are marked NOT LIKE FOR LIKE, not refused.

For the reports only (JUnit, Markdown; they never change the exit code): what is proven *faster* than
the reference by more than its margin (``bootscope.stats.decision.p_faster``, the components' p-values
Benjamini-Hochberg adjusted as above), and the components both sides have that cannot be tested
because one side has fewer than 2 boots of them ("cannot tell").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from bootscope.analyze.like_for_like import like_for_like, not_like_for_like, printing_differs
from bootscope.errors import InputError, StatsError
from bootscope.stats.decision import BAD, GOOD, UNKNOWN, BisectDecision, decide, p_faster
from bootscope.stats.multiple import benjamini_hochberg
from bootscope.usecases.diff import BootParts
from bootscope.usecases.reference import Reach, Reference, reach

EXIT_PASS, EXIT_REGRESSION, EXIT_CANNOT_TELL = 0, 1, 125
POWER_TARGET = 0.8
_POWER_REPLICATES = 200
_SHOWN = 5
_Key = tuple[str, str]  # a component: (kind, name)


@dataclass(frozen=True, slots=True)
class CheckFinding:
    """One regression: the component (kind ``total`` for the metric itself), its decision and, for
    components, the Benjamini-Hochberg q of its "bad" test (None for the total or a new component)."""

    kind: str
    name: str
    decision: BisectDecision | None
    q_bad: float | None
    new_median_s: float | None = None


@dataclass(frozen=True, slots=True)
class CheckImprovement:
    """One thing proven faster than the reference by more than its margin (reported, never a
    failure): the component (kind ``total`` for the metric itself), its decision (shift, interval and
    margin, s), the p of the "faster" test and, for a component, its Benjamini-Hochberg q (None for
    the total, a single test)."""

    kind: str
    name: str
    decision: BisectDecision
    p_faster: float
    q_faster: float | None


@dataclass(frozen=True, slots=True)
class CheckUntested:
    """A component both sides have that cannot be tested ("cannot tell"): ``n_reference`` and
    ``n_new`` are the boots that have it, one of them under 2."""

    kind: str
    name: str
    n_reference: int
    n_new: int


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The answer of ``check``: exit code (0 pass, 1 regression, 125 cannot tell), the total's
    decision (None when fewer than 2 new boots reached the metric), what the reference can prove
    for that many boots (``reach``: the margin used, s; None with fewer than 2 new boots), the
    regressions found, how many components and boots were checked, how many more boots the total
    would need (None when it is not a question of boots or even many more would not settle it),
    a one-line message, notes (one line each: a widened margin, for instance), the
    like-for-like line ("NOT LIKE FOR LIKE: ...") when the boots differ from the reference's in
    more than the kernel under test (None when alike, or nothing states it), what was proven
    faster (the total first, then components, fastest first) and the components that cannot be
    tested for too few boots (by kind and name)."""

    metric: str
    exit_code: int
    total: BisectDecision | None
    reach: Reach | None
    regressions: tuple[CheckFinding, ...]
    components_checked: int
    n_new: int
    more_boots: int | None
    message: str
    notes: tuple[str, ...] = ()
    not_like_for_like: str | None = None
    improvements: tuple[CheckImprovement, ...] = ()
    cannot_tell: tuple[CheckUntested, ...] = ()


def _more_boots(
    reference: Sequence[float], new: Sequence[float], margin_at: Callable[[int], float], alpha: float
) -> int | None:
    """Return how many more new boots would settle the total with 80 % probability, by resampling
    the new boots (seeded), each size with its own margin ``margin_at(size)`` (s); None when even 8
    times as many would not."""
    rng = np.random.default_rng(0)
    pool = np.asarray(new, dtype=np.float64)
    n = len(new)
    size = n + 1
    while size <= max(8 * n, 16):
        margin = margin_at(size)
        decided = 0
        for _ in range(_POWER_REPLICATES):
            drawn = rng.choice(pool, size=size, replace=True)
            decided += decide(reference, list(drawn), 0.0, alpha, min_margin=margin).verdict != UNKNOWN
        if decided >= POWER_TARGET * _POWER_REPLICATES:
            return size - n
        size = max(size + 1, int(size * 1.25))
    return None


def _component_findings(
    reference: Reference, boots: Sequence[BootParts], threshold: float, alpha: float, min_shift_s: float
) -> tuple[list[CheckFinding], list[tuple[_Key, BisectDecision]], dict[_Key, list[float]]]:
    """Return the components found slower (q below alpha), those tested with their decisions, and
    the new boots' values per component (s)."""
    new_components: dict[tuple[str, str], list[float]] = {}
    for boot in boots:
        for key, value in boot.components.items():
            new_components.setdefault(key, []).append(value)
    tested: list[tuple[tuple[str, str], BisectDecision]] = []
    for key, ref_values in reference.components.items():
        values = new_components.get(key, [])
        if len(ref_values) >= 2 and len(values) >= 2:
            try:
                tested.append((key, decide(ref_values, values, threshold, alpha, min_margin=min_shift_s)))
            except StatsError:
                continue
    q_bad = benjamini_hochberg([decision.p_bad for _, decision in tested])
    findings = [
        CheckFinding(key[0], key[1], decision, q, float(np.median(new_components[key])))
        for (key, decision), q in zip(tested, q_bad, strict=True)
        if q is not None and q < alpha
    ]
    return findings, tested, new_components


def _total_faster(
    metric: str,
    ref_total: Sequence[float],
    new_total: Sequence[float],
    total: BisectDecision | None,
    alpha: float,
) -> tuple[CheckImprovement, ...]:
    """Return the total as proven faster than the reference by more than its margin (p below alpha),
    or nothing."""
    if total is None:
        return ()
    p = p_faster(ref_total, new_total, total.margin)
    return () if p is None or p >= alpha else (CheckImprovement("total", metric, total, p, None),)


def _components_faster(
    reference: Reference,
    tested: Sequence[tuple[_Key, BisectDecision]],
    new: dict[_Key, list[float]],
    alpha: float,
) -> tuple[CheckImprovement, ...]:
    """Return the components tested that are proven faster than the reference by more than their
    margin (Benjamini-Hochberg q below alpha), fastest first; ``new`` holds the new boots' values."""
    p_values = [p_faster(reference.components[key], new[key], decision.margin) for key, decision in tested]
    found = [
        CheckImprovement(key[0], key[1], decision, p, q)
        for (key, decision), p, q in zip(tested, p_values, benjamini_hochberg(p_values), strict=True)
        if p is not None and q is not None and q < alpha
    ]
    return tuple(sorted(found, key=lambda f: f.decision.shift))


def _untested(reference: Reference, new: dict[_Key, list[float]]) -> tuple[CheckUntested, ...]:
    """Return the components both sides have with fewer than 2 boots of them on one side (``new``:
    the new boots' values), by kind and name."""
    both = sorted(reference.components.keys() & new.keys())
    counts = ((key, len(reference.components[key]), len(new[key])) for key in both)
    return tuple(
        CheckUntested(key[0], key[1], n_ref, n_new) for key, n_ref, n_new in counts if min(n_ref, n_new) < 2
    )


def _percent(seconds: float, median_s: float) -> str:
    return f"{100 * seconds / abs(median_s):.1f}%" if median_s else "-"


def _widened_note(found: Reach) -> str:
    """Return the line that says the margin is the reference's resolution, not the threshold."""
    wanted = _percent(found.threshold_s, found.median_s)
    would = f"{found.boots_for_threshold} would" if found.boots_for_threshold else "no number would"
    return (
        f"margin {_percent(found.margin_s, found.median_s)} ({found.margin_s:.4f} s), not {wanted}: "
        f"{found.check_boots} boots resolve no finer; {would}"
    )


def _shape_notes(reference: Sequence[float], new: Sequence[float], alpha: float) -> list[str]:
    """A note when the new boots' distribution differs from the reference's by Kolmogorov-Smirnov at
    ``alpha`` (a change of shape, e.g. a slow mode grown more frequent, that the shift test does not
    judge), and one per side that holds two clear modes; never a change of the exit code."""
    from bootscope.stats.compare import shape_of

    tests, modes = shape_of(
        np.asarray(reference, dtype=float), np.asarray(new, dtype=float), "reference", "new", "s"
    )
    ks = next((t for t in tests if t.name == "kolmogorov_smirnov"), None)
    notes = [f"{line} (shape)" for line in modes]
    if ks is not None and ks.p is not None and ks.p < alpha:
        ad = next((t.p for t in tests if t.name == "anderson_darling"), None)
        shown_ad = "-" if ad is None else f"{ad:.3g}"
        notes.insert(
            0,
            f"the shape differs from the reference's: Kolmogorov-Smirnov p = {ks.p:.3g}, Anderson-Darling"
            f" p = {shown_ad} (not the verdict: the shift decides)",
        )
    return notes


def check_boots(
    reference: Reference,
    boots: Sequence[BootParts],
    *,
    metric: str,
    threshold: float,
    alpha: float,
    min_shift_s: float,
) -> CheckResult:
    """Return the verdict on ``boots`` against ``reference`` for ``metric`` and every component both
    have (see the module's rule). Raises InputError when the reference has no (or too few) samples
    of ``metric``."""
    ref_total = reference.metrics.get(metric, ())
    if len(ref_total) < 2:
        raise InputError(f"the reference holds {len(ref_total)} sample(s) of {metric}; it needs 2 or more")
    new_total = [b.total_s for b in boots if b.total_s is not None]
    total: BisectDecision | None = None
    found: Reach | None = None
    notes: list[str] = []
    if len(new_total) >= 2:
        found = reach(metric, ref_total, len(new_total), threshold, alpha)
        total = decide(ref_total, new_total, threshold, alpha, min_margin=found.margin_s)
        if found.margin_s > found.threshold_s:
            notes.append(_widened_note(found))
        notes += _shape_notes(ref_total, new_total, alpha)
    guard = like_for_like(reference.facts, [b.facts for b in boots if b.facts is not None])
    marked = not_like_for_like(guard, "reference", "new")
    findings, tested, new_components = _component_findings(reference, boots, threshold, alpha, min_shift_s)
    printing = printing_differs(guard)
    if printing:
        notes.append(f"{', '.join(printing)} differs: components the reference lacks are not counted")
    if total is not None and total.verdict == BAD:
        findings.insert(0, CheckFinding("total", metric, total, None, float(np.median(new_total))))
    # A component the reference never had, now costing more than the threshold on its own.
    total_margin = threshold * abs(float(np.median(ref_total)))
    for key, values in new_components.items():
        if key not in reference.components and len(values) >= 2 and not printing:
            median = float(np.median(values))
            if median > max(total_margin, min_shift_s):
                findings.append(CheckFinding(key[0], key[1], None, None, median))
    findings.sort(
        key=lambda f: (f.kind != "total", -(f.decision.shift if f.decision else f.new_median_s or 0))
    )
    more = None
    if findings:
        code = EXIT_REGRESSION
        named = ", ".join(f"{f.kind} {f.name}" for f in findings[:_SHOWN])
        extra = len(findings) - _SHOWN
        message = f"regression: {named}" + (f" and {extra} more" if extra > 0 else "")
    elif total is not None and total.verdict == GOOD and found is not None:
        code = EXIT_PASS
        message = (
            f"pass: {metric} not slower than {_percent(found.margin_s, found.median_s)} "
            f"({found.margin_s:.4f} s)"
        )
    else:
        code = EXIT_CANNOT_TELL
        if total is None:
            more = 2 - len(new_total)
            message = f"cannot tell: {len(new_total)} boot(s) reached {metric}; at least {more} more needed"
        else:

            def margin_at(size: int) -> float:
                return reach(metric, ref_total, size, threshold, alpha).margin_s

            more = _more_boots(ref_total, new_total, margin_at, alpha)
            needed = f"about {more} more boots would settle it" if more else "many more boots are needed"
            message = f"cannot tell with {len(new_total)} boots: {needed}"
    return CheckResult(
        metric,
        code,
        total,
        found,
        tuple(findings),
        len(tested),
        len(new_total),
        more,
        message,
        tuple(notes),
        marked,
        _total_faster(metric, ref_total, new_total, total, alpha)
        + _components_faster(reference, tested, new_components, alpha),
        _untested(reference, new_components),
    )

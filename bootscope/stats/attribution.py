"""What got slower: the total's shift split over components (phases, initcalls, CPUs, gaps, units).

Every component present on both sides gets its own comparison, b against a: per-side medians, the
Hodges-Lehmann shift (b - a) with its interval and the Mann-Whitney p-value, the same functions as
``compare``. Hundreds of initcalls are hundreds of tests, so a p-value below alpha alone would flag
about alpha x m of them when nothing changed; the p-values are therefore Benjamini-Hochberg adjusted
(q) and a component is called moved only when q is below the false discovery rate AND its interval
lies on one side of zero (``compare``'s rule).

Components are ranked by the size of their move (absolute shift), so the largest move comes first
whichever way it goes: a phase 0.16 s faster that offsets two slower ones must not hide behind them.
A component's share is its shift over the total's shift only when the total moved (a significant
verdict); when it did not, that ratio explodes as the total nears zero (+200 %, -217 %), so the share
is taken of the sum of the absolute shifts of the component's kind instead, and ``share_basis`` says
which. What the moved components of one kind (``explained_kind``: the phases, which add up to the
total in every boot, when compared) leave of the total's shift is the one ``unexplained_s``; and when
moved components of that kind went both ways, ``offsets`` names them, so a report can say how the
total came about (it held because one phase offset two others).

A component seen on one side only (an initcall blacklisted, a line that a new option prints) moved
by all of its time; whether that is more than chance (a rare line seen in two boots of one side) is
Fisher's exact test on how many boots of each side have it, and its p-value joins the others in the
Benjamini-Hochberg adjustment. Unless the sides print differently (one side boots with
``initcall_debug``): then the caller names the kinds whose one-sided rows only show what is printed
(``printed_kinds``), and those rows are set apart (``printed_one_side``), never called moved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.model import Comparison, LikeForLike
from bootscope.stats.batch import mann_whitney_p_rows, shift_ci_rows
from bootscope.stats.compare import FASTER, SLOWER, Options, compare, interval_side
from bootscope.stats.multiple import benjamini_hochberg

COMPARED, APPEARED, DISAPPEARED, TOO_FEW = "compared", "appeared", "disappeared", "too few boots"
PRINTED_ONE_SIDE = "printed on one side only"
MIN_PER_SIDE = 2
SHARE_OF_TOTAL, SHARE_OF_MOVES = "total", "moves"
# How many components a side of ``Offsets`` names at most.
OFFSETS_NAMED = 3


@dataclass(frozen=True, slots=True)
class ComponentSamples:
    """One component's values (s), one per boot that has it, on each side, and how many boots each
    side has in all (None: unknown, then a one-sided component gets no presence test)."""

    kind: str
    name: str
    a: tuple[float, ...]
    b: tuple[float, ...]
    boots_a: int | None = None
    boots_b: int | None = None


@dataclass(frozen=True, slots=True)
class ComponentShift:
    """One component compared: boots and medians per side (s; None where a side has none), the
    shift b - a (s; for a component on one side only, its median, negative when it disappeared) with
    its interval, the p-value (Mann-Whitney; Fisher's exact presence test for a one-sided component),
    the Benjamini-Hochberg q, its share of the total's shift (None unless the total moved: a faster
    or slower verdict), its share of the sum of its kind's absolute shifts (signed; None when that
    sum is 0), its status (compared, appeared, disappeared, too few boots, printed on one side only)
    and whether it is called moved."""

    kind: str
    name: str
    n_a: int
    median_a_s: float | None
    n_b: int
    median_b_s: float | None
    shift_s: float | None
    shift_ci_s: tuple[float, float] | None
    p: float | None
    q: float | None
    share_of_total: float | None
    status: str
    moved: bool
    share_of_moves: float | None = None

    def share(self, basis: str) -> float | None:
        """Return the share (fraction, signed) against ``basis``: SHARE_OF_TOTAL or SHARE_OF_MOVES."""
        return self.share_of_total if basis == SHARE_OF_TOTAL else self.share_of_moves


@dataclass(frozen=True, slots=True)
class KindDecomposition:
    """How much of the total's shift one kind's components explain (s): ``explained_s`` the sum of
    its moved components' shifts, ``sum_all_s`` the sum of all its components' shifts (for phases,
    which add up to the total in every boot, close to the total's shift: HL estimates add only
    roughly), ``sum_abs_s`` the sum of their absolute shifts (the basis of ``share_of_moves``)."""

    kind: str
    moved: int
    explained_s: float
    sum_all_s: float
    sum_abs_s: float = 0.0


@dataclass(frozen=True, slots=True)
class Offsets:
    """Moved components of one kind that went opposite ways (s): ``rising`` (b slower) and
    ``falling`` (b faster), each as (name, shift) largest first, at most OFFSETS_NAMED, with how
    many more each side has; both sides are non-empty."""

    kind: str
    rising: tuple[tuple[str, float], ...]
    falling: tuple[tuple[str, float], ...]
    more_rising: int
    more_falling: int


@dataclass(frozen=True, slots=True)
class Attribution:
    """The total's comparison and every component's: ``components`` holds the compared ones and those
    present on one side only (appeared: shift = b's median; disappeared: minus a's median), ranked by
    the size of their shift; ``too_few`` those with under 2 boots on a side; ``printed_one_side``
    those on one side only of a kind the caller said the sides print differently. ``by_kind``
    decomposes the total per kind (kinds overlap: an initcall lies inside the initcalls phase, so
    each kind is its own decomposition). ``share_basis`` says which share a report shows
    (SHARE_OF_TOTAL when the total moved, else SHARE_OF_MOVES); ``unexplained_s`` is the total's
    shift minus the shifts of ``explained_kind``'s moved components (None without a total estimate
    or a component); ``offsets`` the moved components of that kind that went opposite ways."""

    total: Comparison
    components: tuple[ComponentShift, ...]
    too_few: tuple[ComponentShift, ...]
    fdr: float
    by_kind: tuple[KindDecomposition, ...]
    correction: str
    share_basis: str = SHARE_OF_TOTAL
    explained_kind: str | None = None
    unexplained_s: float | None = None
    offsets: Offsets | None = None
    printed_one_side: tuple[ComponentShift, ...] = ()


def _median(values: Sequence[float]) -> float | None:
    return float(np.median(values)) if values else None


def _one_component(item: ComponentSamples) -> tuple[ComponentShift, int]:
    """Return a component with fewer than 2 boots on a side: appeared or disappeared (with its
    presence test) or too few boots to compare; its direction is 0."""
    n_a, n_b = len(item.a), len(item.b)
    base = ComponentShift(
        item.kind, item.name, n_a, _median(item.a), n_b, _median(item.b),
        None, None, None, None, None, TOO_FEW, False,
    )  # fmt: skip
    if (n_a == 0) != (n_b == 0):
        status, shift_s = (
            (APPEARED, base.median_b_s) if n_a == 0 else (DISAPPEARED, -(base.median_a_s or 0.0))
        )
        return _with(base, status=status, shift_s=shift_s, p=presence_p(item)), 0
    return base, 0


def _compare_group(items: Sequence[ComponentSamples], alpha: float) -> list[tuple[ComponentShift, int]]:
    """Return the unadjusted comparisons of components that all have the same boot counts per side
    (at least 2 each), with the direction each test points to (-1, 0, 1: U of b below, at or above
    n*m/2). Vectorised (``batch``): the same numbers as ``hodges_lehmann`` and ``mann_whitney`` one
    by one, where scipy's exact test alone costs milliseconds per call."""
    a = np.array([item.a for item in items], dtype=np.float64)
    b = np.array([item.b for item in items], dtype=np.float64)
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise StatsError("a component holds a NaN or infinite value")
    estimate, low, high = shift_ci_rows(a, b, alpha)
    p = mann_whitney_p_rows(a, b)
    pooled = np.concatenate([a, b], axis=1)
    constant = np.all(pooled == pooled[:, :1], axis=1)
    n_a, n_b = a.shape[1], b.shape[1]
    u_of_b = sps.rankdata(pooled, axis=1)[:, n_a:].sum(axis=1) - n_b * (n_b + 1) / 2.0
    direction = np.sign(u_of_b - n_a * n_b / 2.0).astype(int)
    found = []
    for row, item in enumerate(items):
        ci = None if np.isnan(low[row]) else (float(low[row]), float(high[row]))
        shift = ComponentShift(
            item.kind, item.name, n_a, float(np.median(a[row])), n_b, float(np.median(b[row])),
            float(estimate[row]), ci, None if constant[row] else float(p[row]), None, None, COMPARED, False,
        )  # fmt: skip
        found.append((shift, int(direction[row])))
    return found


def presence_p(item: ComponentSamples) -> float | None:
    """Return Fisher's exact two-sided p-value (dimensionless) that the share of boots having the
    component differs between the sides; None when a side's boot count is unknown."""
    if item.boots_a is None or item.boots_b is None:
        return None
    have_a, have_b = len(item.a), len(item.b)
    table = np.array([[have_a, max(item.boots_a - have_a, 0)], [have_b, max(item.boots_b - have_b, 0)]])
    return float(sps.fisher_exact(table).pvalue)


def _with(shift: ComponentShift, **changes: object) -> ComponentShift:
    return replace(shift, **changes)  # type: ignore[arg-type]


def _decompose(kind: str, items: Sequence[ComponentShift]) -> KindDecomposition:
    return KindDecomposition(
        kind=kind,
        moved=sum(1 for item in items if item.moved),
        explained_s=float(sum(item.shift_s or 0.0 for item in items if item.moved)),
        sum_all_s=float(sum(item.shift_s or 0.0 for item in items)),
        sum_abs_s=float(sum(abs(item.shift_s or 0.0) for item in items)),
    )


def offsets(kind: str | None, ranked: Sequence[ComponentShift]) -> Offsets | None:
    """Return the moved components of ``kind`` that went opposite ways (see :class:`Offsets`), or
    None when the moved ones all went one way (or none moved). Raises nothing."""
    moved = [(item.name, item.shift_s or 0.0) for item in ranked if item.kind == kind and item.moved]
    rising = sorted((pair for pair in moved if pair[1] > 0), key=lambda pair: -pair[1])
    falling = sorted((pair for pair in moved if pair[1] < 0), key=lambda pair: pair[1])
    if kind is None or not rising or not falling:
        return None
    return Offsets(
        kind,
        tuple(rising[:OFFSETS_NAMED]),
        tuple(falling[:OFFSETS_NAMED]),
        max(0, len(rising) - OFFSETS_NAMED),
        max(0, len(falling) - OFFSETS_NAMED),
    )


def _explained_kind(wanted: str | None, ranked: Sequence[ComponentShift]) -> str | None:
    kinds = [item.kind for item in ranked]
    if wanted is not None and wanted in kinds:
        return wanted
    return kinds[0] if kinds else None


def attribute(
    total_a: Sequence[float],
    total_b: Sequence[float],
    components: Sequence[ComponentSamples],
    *,
    metric: str,
    alpha: float = 0.05,
    fdr: float = 0.05,
    name_a: str = "a",
    name_b: str = "b",
    additive_kind: str | None = None,
    printed_kinds: frozenset[str] = frozenset(),
) -> Attribution:
    """Return the total's comparison (``compare``, b against a, seconds) and every component's, with
    Benjamini-Hochberg q-values over the compared components at false discovery rate ``fdr``, ranked
    by the size of their shift. ``additive_kind`` is the kind whose moved components explain the
    total (``unexplained_s``, ``offsets``; default, or when absent: the first-ranked component's
    kind); components of ``printed_kinds`` seen on one side only are set apart, not tested.

    Raises StatsError for fewer than 2 totals a side, NaN, an alpha outside (0, 0.5) or an fdr
    outside (0, 1).
    """
    if not 0.0 < fdr < 1.0:
        raise StatsError(f"the false discovery rate must lie between 0 and 1 (got {fdr:g})")
    total = compare(
        total_a,
        total_b,
        metric,
        "s",
        Options(alpha=alpha, bootstrap_resamples=0, power=False, shape=True),
        name_a,
        name_b,
    )
    groups: dict[tuple[int, int], list[ComponentSamples]] = {}
    raw: list[tuple[ComponentShift, int]] = []
    for item in components:
        if len(item.a) >= MIN_PER_SIDE and len(item.b) >= MIN_PER_SIDE:
            groups.setdefault((len(item.a), len(item.b)), []).append(item)
        else:
            raw.append(_one_component(item))
    for group in groups.values():
        raw += _compare_group(group, alpha)
    given = {(item.kind, item.name): i for i, item in enumerate(components)}
    raw.sort(key=lambda pair: given[(pair[0].kind, pair[0].name)])
    printed = tuple(
        _with(shift, status=PRINTED_ONE_SIDE, p=None)
        for shift, _ in raw
        if shift.kind in printed_kinds and shift.status in (APPEARED, DISAPPEARED)
    )
    raw = [
        pair
        for pair in raw
        if not (pair[0].kind in printed_kinds and pair[0].status in (APPEARED, DISAPPEARED))
    ]
    tested = [(shift, direction) for shift, direction in raw if shift.status != TOO_FEW]
    q_values = benjamini_hochberg([shift.p for shift, _ in tested])
    finished: list[ComponentShift] = []
    for (shift, direction), q in zip(tested, q_values, strict=True):
        if shift.status == COMPARED:
            side = interval_side(shift.shift_ci_s, "two-sided", direction)
            moved = q is not None and q < fdr and side != 0
        else:  # appeared or disappeared: all of its time, if its presence changed beyond chance
            moved = q is not None and q < fdr
        finished.append(_with(shift, q=q, moved=moved))
    one_sided = tuple(shift for shift, _ in raw if shift.status == TOO_FEW)
    # Largest move first, whichever way; equal moves in input order.
    ranked = sorted(finished, key=lambda item: (-abs(item.shift_s or 0.0), given[(item.kind, item.name)]))
    by_kind = tuple(
        _decompose(kind, [item for item in ranked if item.kind == kind])
        for kind in dict.fromkeys(item.kind for item in components)
    )
    total_shift = total.shift_estimate
    total_moved = total.verdict in (FASTER, SLOWER) and bool(total_shift)
    sum_abs = {d.kind: d.sum_abs_s for d in by_kind}
    ranked = [
        _with(
            item,
            share_of_total=(item.shift_s / total_shift)
            if total_moved and total_shift and item.shift_s is not None
            else None,
            share_of_moves=(item.shift_s / sum_abs[item.kind])
            if sum_abs.get(item.kind) and item.shift_s is not None
            else None,
        )
        for item in ranked
    ]
    kind = _explained_kind(additive_kind, ranked)
    explained = next((d.explained_s for d in by_kind if d.kind == kind), 0.0)
    return Attribution(
        total=total,
        components=tuple(ranked),
        too_few=tuple(sorted(one_sided, key=lambda item: (item.kind, item.name))),
        fdr=fdr,
        by_kind=by_kind,
        correction=f"Benjamini-Hochberg over {len(tested)} components, false discovery rate {fdr:g}",
        share_basis=SHARE_OF_TOTAL if total_moved else SHARE_OF_MOVES,
        explained_kind=kind,
        unexplained_s=None if total_shift is None or kind is None else total_shift - explained,
        offsets=offsets(kind, ranked),
        printed_one_side=printed,
    )


@dataclass(frozen=True, slots=True)
class DiffResult:
    """The answer of ``diff``: the metric, both sides' names, the kinds compared, where the boots
    came from, the attribution, notes for the user (boots left out, a third variant ignored)."""

    metric: str
    baseline: str
    variant: str
    kinds: tuple[str, ...]
    source: str
    attribution: Attribution
    notes: tuple[str, ...]
    like_for_like: LikeForLike | None = None

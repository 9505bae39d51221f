"""Steps in a long series of points (one point: the median boot time of one revision on one machine),
each judged against this series' own noise.

A step before point t is a candidate when the median of the ``fore_points`` points from t on differs
from the median of the ``back_points`` points before t by at least ``min_jitter_ratio`` times the
series' jitter, and the Mann-Whitney test of those two windows rejects at ``alpha``. The windows
are Perfherder's idea (a back window against a fore window); the gate in units of the series' own
point-to-point noise is rustc-perf's and Conbench's (a change is judged against this benchmark's own
history, not one threshold for all).

**Jitter** is the robust standard deviation of one point, from the differences of successive points
in the back window: median(|x[i+1] - x[i]|) / 0.9539 (for normal noise the median absolute
difference of two independent draws is 0.6745 * sqrt(2) = 0.9539 standard deviations). Successive
differences ignore a slow drift and a single earlier step moves only one of them, so a step does not
raise the yardstick it is measured with.

Neighbouring positions around one step are all candidates; each run of consecutive candidates is
one change, placed where two levels (medians) fit the stretch best (least absolute deviation), and
its **plausible range** is every position of that stretch, candidate or not, where a step fits
within two jitters of the best (Chromium's extended culprit range: a culprit is named as a range of
revisions, not one commit). A weak step's candidates can begin after it (the windows must first
hold enough of it); the range still reaches back to where it may be.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from bootscope.errors import StatsError
from bootscope.stats.rank import hodges_lehmann, mann_whitney

FloatArray = npt.NDArray[np.float64]

# median |X1 - X2| of two independent N(0, s^2) draws, in units of s: sqrt(2) * 0.67449.
MEDIAN_ABS_DIFF_PER_SD = 0.9539
METHOD = (
    "back window against fore window of revision medians: Mann-Whitney p and Hodges-Lehmann shift,"
    " gated at a multiple of the series' jitter (robust SD of successive differences)"
)


@dataclass(frozen=True, slots=True)
class WatchRule:
    """When a series' step is a change: windows of ``back_points`` and ``fore_points`` revisions,
    at least ``min_back_points`` before and ``min_fore_points`` after it, shift at least
    ``min_jitter_ratio`` jitters and the window test's p at most ``alpha``."""

    back_points: int = 24
    fore_points: int = 12
    min_back_points: int = 8
    min_fore_points: int = 4
    min_jitter_ratio: float = 1.5
    alpha: float = 1e-4

    def __post_init__(self) -> None:
        if not 2 <= self.min_back_points <= self.back_points:
            raise StatsError(f"min_back_points must be in 2..back_points, got {self.min_back_points}")
        if not 1 <= self.min_fore_points <= self.fore_points:
            raise StatsError(f"min_fore_points must be in 1..fore_points, got {self.min_fore_points}")
        if not 0 < self.alpha < 1:
            raise StatsError(f"alpha must be between 0 and 1, got {self.alpha}")
        if not self.min_jitter_ratio > 0:
            raise StatsError(f"min_jitter_ratio must be positive, got {self.min_jitter_ratio}")

    def to_dict(self) -> dict[str, Any]:
        """Return the rule as a JSON-able document (stored with every alert)."""
        return asdict(self)

    @property
    def min_points(self) -> int:
        """The fewest points a series needs before any step can be judged."""
        return self.min_back_points + self.min_fore_points


@dataclass(frozen=True, slots=True)
class SeriesChange:
    """One step: ``position`` is the first point after it (0-based), ``first_position`` ..
    ``last_position`` the points that may hold it; ``shift`` the Hodges-Lehmann fore minus back (the
    metric's unit; positive: slower), ``shift_ci`` its interval at 1 - alpha (None: too few points);
    ``p`` the window test's p-value; ``jitter`` the series' jitter there; ``jitter_ratio`` |shift| in
    jitters (inf where the jitter is zero)."""

    position: int
    first_position: int
    last_position: int
    shift: float
    shift_ci: tuple[float, float] | None
    p: float
    jitter: float
    jitter_ratio: float
    before_median: float
    n_back: int
    n_fore: int


@dataclass(frozen=True, slots=True)
class SeriesVerdict:
    """A series judged: its changes in order, the jitter over its whole length (None: fewer than
    three points), and whether it had enough history to judge any step at all."""

    changes: tuple[SeriesChange, ...]
    jitter: float | None
    enough_history: bool
    points: int


def jitter(points: Sequence[float] | FloatArray) -> float | None:
    """Return the robust standard deviation of one point from successive differences (see the
    module docstring), in the points' unit; None for fewer than three points."""
    values = np.asarray(points, dtype=np.float64)
    if values.size < 3:
        return None
    return float(np.median(np.abs(np.diff(values)))) / MEDIAN_ABS_DIFF_PER_SD


def _row_medians(rows: FloatArray) -> FloatArray:
    """Median of each row's values that are not NaN (NaN for a row of none)."""
    ordered = np.sort(rows, axis=1)  # NaN sorts last
    count = np.count_nonzero(~np.isnan(rows), axis=1)
    index = np.arange(rows.shape[0])
    width = rows.shape[1]
    low = np.clip((count - 1) // 2, 0, width - 1)
    high = np.clip(count // 2, 0, width - 1)
    result: FloatArray = np.where(count > 0, (ordered[index, low] + ordered[index, high]) / 2.0, np.nan)
    return result


def _window_medians(padded: FloatArray, width: int) -> FloatArray:
    """Median of every window of ``width`` over ``padded`` (NaN: missing), NaN for an empty window."""
    return _row_medians(np.lib.stride_tricks.sliding_window_view(padded, width))


def gate_ratios(points: FloatArray, rule: WatchRule) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Return, for every position t (a step just before point t), the fore-minus-back window median
    difference, the jitter of the back window and their ratio (NaN where the windows are shorter
    than the rule's minimums). Unit of the points, except the ratio (jitters)."""
    size = points.size
    back, fore = rule.back_points, rule.fore_points
    nan = np.full(max(back, fore), np.nan)
    padded = np.concatenate([nan[:back], points, nan[:fore]])
    # Window k of width w starts at padded index k, i.e. at point k - back.
    back_median = _window_medians(padded, back)[:size]  # points t-back .. t-1
    fore_median = _window_medians(padded, fore)[back : back + size]  # points t .. t+fore-1
    steps = np.abs(np.diff(points)) if size > 1 else np.zeros(0)
    padded_steps = np.concatenate([nan[:back], steps, nan[:1]])  # window t: steps t-back .. t-2
    back_jitter = _window_medians(padded_steps, back - 1)[:size] / MEDIAN_ABS_DIFF_PER_SD
    shift = fore_median - back_median
    index = np.arange(size)
    enough = (index >= rule.min_back_points) & (size - index >= rule.min_fore_points)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(back_jitter > 0, np.abs(shift) / back_jitter, np.where(shift != 0, np.inf, 0.0))
    ratio = np.where(enough, ratio, np.nan)
    return shift, back_jitter, ratio


def _runs(flags: npt.NDArray[np.bool_], bridge: int) -> list[tuple[int, int]]:
    """Return [start, stop) of every run of True values, runs fewer than ``bridge`` apart joined."""
    edges = np.diff(np.concatenate([[0], flags.astype(np.int8), [0]]))
    starts, stops = np.flatnonzero(edges == 1).tolist(), np.flatnonzero(edges == -1).tolist()
    runs: list[tuple[int, int]] = []
    for start, stop in zip(starts, stops, strict=True):
        if runs and start - runs[-1][1] < bridge:
            runs[-1] = (runs[-1][0], stop)
        else:
            runs.append((start, stop))
    return runs


def _step_costs(points: FloatArray, low: int, high: int, candidates: range) -> FloatArray:
    """Return, for each candidate t, the L1 cost of two levels (medians) on points[low:t], [t:high]
    (all candidates at once: one row each, the other side's points masked)."""
    segment = points[low:high]
    cuts = np.asarray(candidates, dtype=np.int64)[:, None] - low
    columns = np.arange(segment.size)[None, :]
    left = np.where(columns < cuts, segment[None, :], np.nan)
    right = np.where(columns >= cuts, segment[None, :], np.nan)
    spread_left = np.abs(left - _row_medians(left)[:, None])
    spread_right = np.abs(right - _row_medians(right)[:, None])
    result: FloatArray = np.nansum(spread_left, axis=1) + np.nansum(spread_right, axis=1)
    return result


# A window pair whose normal-approximation p is above this many alphas is not tested exactly: the
# approximation is within a few per cent of the exact p at these sizes, never a factor of 20.
_SCREEN_FACTOR = 20.0


def screen_p(back: FloatArray, fore: FloatArray) -> float:
    """Return the two-sided normal-approximation p of the Mann-Whitney test of ``fore`` against
    ``back`` (tie-corrected, continuity-corrected); 1.0 when every value is the same."""
    n1, n2 = back.size, fore.size
    greater = np.count_nonzero(fore[:, None] > back[None, :])
    equal = np.count_nonzero(fore[:, None] == back[None, :])
    u = greater + 0.5 * equal
    _, ties = np.unique(np.concatenate([back, fore]), return_counts=True)
    n = n1 + n2
    variance = n1 * n2 / 12.0 * ((n + 1) - float(np.sum(ties.astype(np.float64) ** 3 - ties)) / (n * (n - 1)))
    if variance <= 0:
        return 1.0
    z = max(0.0, abs(u - n1 * n2 / 2.0) - 0.5) / math.sqrt(variance)
    return math.erfc(z / math.sqrt(2.0))


def _change_at(
    points: FloatArray, t: int, first: int, last: int, rule: WatchRule, jit: float, floor: int
) -> SeriesChange | None:
    back = points[max(floor, t - rule.back_points) : t]
    fore = points[t : t + rule.fore_points]
    if screen_p(back, fore) > _SCREEN_FACTOR * rule.alpha:
        return None
    test = mann_whitney(back, fore)
    if test.p is None or test.p > rule.alpha:
        return None
    estimate = hodges_lehmann(back, fore, rule.alpha)
    shift = estimate.estimate
    ratio = abs(shift) / jit if jit > 0 else (np.inf if shift != 0 else 0.0)
    if ratio < rule.min_jitter_ratio:
        return None
    return SeriesChange(
        position=t,
        first_position=first,
        last_position=last,
        shift=shift,
        shift_ci=estimate.ci,
        p=float(test.p),
        jitter=jit,
        jitter_ratio=float(ratio),
        before_median=float(np.median(back)),
        n_back=int(back.size),
        n_fore=int(fore.size),
    )


def watch_series(points: Sequence[float] | FloatArray, rule: WatchRule | None = None) -> SeriesVerdict:
    """Judge one series of points (in revision order, the metric's unit): every change the rule
    finds (see the module docstring), none for a series shorter than ``rule.min_points``.

    Raises StatsError for a value that is not a finite number."""
    rule = rule or WatchRule()
    values = np.asarray(points, dtype=np.float64)
    if values.ndim != 1:
        raise StatsError("a series is one sequence of points")
    if not np.all(np.isfinite(values)):
        raise StatsError("a series holds a value that is not a finite number")
    whole = jitter(values)
    if values.size < rule.min_points:
        return SeriesVerdict((), whole, False, int(values.size))
    _shift, back_jitter, ratio = gate_ratios(values, rule)
    flagged = np.nan_to_num(ratio, nan=0.0) >= rule.min_jitter_ratio
    changes: list[SeriesChange] = []
    floor = 0  # a step is placed and tested only after the previous change
    for start, stop in _runs(flagged, rule.min_fore_points):
        start = max(start, floor + rule.min_back_points)
        if start >= stop:
            continue
        low = max(floor, start - rule.back_points)
        high = min(values.size, stop - 1 + rule.fore_points)
        first_cut = low + 1
        costs = _step_costs(values, low, high, range(first_cut, high))
        best = start + int(np.argmin(costs[start - first_cut : stop - first_cut]))
        jit = float(back_jitter[best])
        # Plausible: moving the step there costs less than two jitters of fit.
        near = np.flatnonzero(costs <= costs[best - first_cut] + 2.0 * jit) + first_cut
        change = _change_at(values, best, int(near.min()), int(near.max()), rule, jit, floor)
        if change is not None:
            changes.append(change)
            floor = best
    return SeriesVerdict(tuple(changes), whole, True, int(values.size))


# A share is a count of a few boots per point: its windows are this many times the rule's (back,
# fore), or a change of shape could only be seen when it is large.
SHARE_WINDOWS = (4, 3)
# ... and its test runs at this fraction of the rule's alpha: a share has no jitter gate, and the
# labelled benchmark (bench/RESULTS.md) found false alerts above 5 % at the rule's own alpha.
SHARE_ALPHA_FACTOR = 0.01


def watch_shares(
    hits: npt.NDArray[np.int64], counts: npt.NDArray[np.int64], rule: WatchRule | None = None
) -> SeriesVerdict:
    """Judge a series of shares: point i has ``counts[i]`` boots, ``hits[i]`` of them in the slow
    tail. A step before point t is a change when the share over the fore window's boots differs
    from the back window's by Fisher's exact test at ``rule.alpha * SHARE_ALPHA_FACTOR`` (windows
    SHARE_WINDOWS times the rule's). Candidates are where the two-proportion z-test passes a loose
    screen; a run of them is one change, placed where two shares fit best (binomial likelihood),
    plausible wherever in that stretch (candidate or not) a step fits within 2 of that. ``shift``:
    share after minus before, ``shift_ci`` its Wald interval, ``jitter`` the standard deviation of
    one point's share at the share before (binomial),
    ``before_median`` the share before. Raises StatsError for hits outside 0..counts."""
    from scipy import stats as sps

    rule = rule or WatchRule()
    back_points, fore_points = SHARE_WINDOWS[0] * rule.back_points, SHARE_WINDOWS[1] * rule.fore_points
    hits = np.asarray(hits, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    if hits.shape != counts.shape or np.any(hits < 0) or np.any(hits > counts) or np.any(counts < 1):
        raise StatsError("a share series needs 0 <= hits <= counts and counts >= 1 per point")
    size = int(counts.size)
    whole = jitter(hits / counts) if size else None
    if size < rule.min_points:
        return SeriesVerdict((), whole, False, size)
    hit_sums = np.concatenate([[0], np.cumsum(hits)])
    count_sums = np.concatenate([[0], np.cumsum(counts)])
    t = np.arange(size)
    low, high = np.maximum(0, t - back_points), np.minimum(size, t + fore_points)
    back_hits, back_n = hit_sums[t] - hit_sums[low], count_sums[t] - count_sums[low]
    fore_hits, fore_n = hit_sums[high] - hit_sums[t], count_sums[high] - count_sums[t]
    enough = (t >= rule.min_back_points) & (size - t >= rule.min_fore_points)
    with np.errstate(divide="ignore", invalid="ignore"):
        pooled = (back_hits + fore_hits) / (back_n + fore_n)
        spread = np.sqrt(pooled * (1 - pooled) * (1 / back_n + 1 / fore_n))
        z = np.where(spread > 0, (fore_hits / fore_n - back_hits / back_n) / spread, 0.0)
    z = np.where(enough, z, 0.0)
    alpha = rule.alpha * SHARE_ALPHA_FACTOR
    screen = abs(float(sps.norm.isf(_SCREEN_FACTOR * alpha / 2))) if _SCREEN_FACTOR * alpha < 1 else 0.0
    changes: list[SeriesChange] = []
    floor = 0
    for start, stop in _runs(np.abs(z) >= screen, rule.min_fore_points):
        start = max(start, floor + rule.min_back_points)
        if start >= stop:
            continue
        # Placed where two shares fit the local stretch best (binomial log-likelihood); plausible:
        # every cut of the stretch within 2 of that (a likelihood-ratio interval of about 95 %).
        region = (max(floor, start - back_points), min(size, stop - 1 + fore_points))
        first_cut = region[0] + 1
        fit = _share_fit(hit_sums, count_sums, region, np.arange(first_cut, region[1]))
        best = start + int(np.argmax(fit[start - first_cut : stop - first_cut]))
        near = np.flatnonzero(fit >= fit[best - first_cut] - 2.0) + first_cut
        table = np.array(
            [
                [fore_hits[best], fore_n[best] - fore_hits[best]],
                [back_hits[best], back_n[best] - back_hits[best]],
            ]
        )
        p = float(sps.fisher_exact(table).pvalue)
        if p > alpha:
            continue
        before = back_hits[best] / back_n[best]
        after = fore_hits[best] / fore_n[best]
        shift = float(after - before)
        z_ci = float(sps.norm.isf(alpha / 2))
        wald = np.sqrt(before * (1 - before) / back_n[best] + after * (1 - after) / fore_n[best])
        per_point = float(np.sqrt(max(before * (1 - before), 1e-12) / np.mean(counts[low[best] : best])))
        changes.append(
            SeriesChange(
                position=best,
                first_position=int(near.min()),
                last_position=int(near.max()),
                shift=shift,
                shift_ci=(shift - z_ci * float(wald), shift + z_ci * float(wald)),
                p=p,
                jitter=per_point,
                jitter_ratio=abs(shift) / per_point,
                before_median=float(before),
                n_back=int(best - low[best]),
                n_fore=int(high[best] - best),
            )
        )
        floor = best
    return SeriesVerdict(tuple(changes), whole, True, size)


def _share_fit(
    hit_sums: npt.NDArray[np.int64],
    count_sums: npt.NDArray[np.int64],
    region: tuple[int, int],
    cuts: npt.NDArray[np.int64],
) -> FloatArray:
    """Binomial log-likelihood of one share on points region[0]..cut-1 and another on cut..region[1]-1."""

    def loglik(hits: FloatArray, total: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(total > 0, hits / total, 0.0)
            inside = (share > 0) & (share < 1)
            value = hits * np.log(np.where(inside, share, 1.0)) + (total - hits) * np.log(
                np.where(inside, 1 - share, 1.0)
            )
        result: FloatArray = np.where(inside, value, 0.0)
        return result

    low, high = region
    left = loglik(
        (hit_sums[cuts] - hit_sums[low]).astype(float), (count_sums[cuts] - count_sums[low]).astype(float)
    )
    right = loglik(
        (hit_sums[high] - hit_sums[cuts]).astype(float), (count_sums[high] - count_sums[cuts]).astype(float)
    )
    result: FloatArray = left + right
    return result

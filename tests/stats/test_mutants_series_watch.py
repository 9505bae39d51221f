"""The watch detectors against plain re-readings of their documented rules (mutation testing's
seventh run, bench/RESULTS.md): where a step is placed and which revisions may hold it, read with
plain loops and medians; a share step's every number from the window counts by hand."""

from __future__ import annotations

import itertools
import math
import statistics

import numpy as np
import pytest
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats.series_watch import (
    SHARE_ALPHA_FACTOR,
    SHARE_WINDOWS,
    SeriesVerdict,
    WatchRule,
    _change_at,
    _runs,
    gate_ratios,
    jitter,
    watch_series,
    watch_shares,
)


def _plain_cost(points: list[float], low: int, cut: int, high: int) -> float:
    left, right = points[low:cut], points[cut:high]
    return sum(abs(v - statistics.median(left)) for v in left) + sum(
        abs(v - statistics.median(right)) for v in right
    )


def _plain_watch(values: np.ndarray, rule: WatchRule) -> list[tuple[int, int, int]]:
    """(position, first, last) of each change, the module docstring's rule read with plain loops:
    each run of candidates (bridged over gaps shorter than min_fore_points) is placed, after the
    previous change, where two medians fit the stretch [low, high) best, plausible wherever a cut of
    the stretch fits within two jitters of that; the window test decides (the module's own)."""
    points = [float(v) for v in values]
    _, back_jitter, ratio = gate_ratios(values, rule)
    flagged = np.nan_to_num(ratio, nan=0.0) >= rule.min_jitter_ratio
    found: list[tuple[int, int, int]] = []
    floor = 0
    for run_start, stop in _runs(flagged, rule.min_fore_points):
        start = max(run_start, floor + rule.min_back_points)
        if start >= stop:
            continue
        low = max(floor, start - rule.back_points)
        high = min(len(points), stop - 1 + rule.fore_points)
        costs = {cut: _plain_cost(points, low, cut, high) for cut in range(low + 1, high)}
        best = min(range(start, stop), key=lambda cut: (costs[cut], cut))
        jit = float(back_jitter[best])
        near = [cut for cut, cost in costs.items() if cost <= costs[best] + 2.0 * jit + 1e-12]
        change = _change_at(values, best, min(near), max(near), rule, jit, floor)
        if change is not None:
            found.append((change.position, change.first_position, change.last_position))
            floor = best
    return found


@pytest.mark.parametrize("seed", range(12))
def test_placement_and_ranges_match_a_plain_reading(seed: int) -> None:
    rng = np.random.default_rng(seed)
    points = rng.normal(0.0, 1.0, 160)
    # two steps, the second sometimes close after the first, and a lone outlier
    first, second = int(rng.integers(20, 70)), int(rng.integers(75, 140))
    points[first:] += rng.choice([-1, 1]) * rng.uniform(1.5, 4.0)
    points[second:] += rng.choice([-1, 1]) * rng.uniform(1.5, 4.0)
    points[int(rng.integers(0, 160))] += 6.0
    rule = WatchRule(back_points=16, fore_points=8, min_back_points=6, min_fore_points=3, alpha=1e-3)
    got = [(c.position, c.first_position, c.last_position) for c in watch_series(points, rule).changes]
    assert got == _plain_watch(points, rule)


def test_a_step_at_the_first_place_it_can_be_judged_is_found_there() -> None:
    rule = WatchRule(back_points=8, fore_points=4, min_back_points=8, min_fore_points=4, alpha=0.01)
    points = np.array([1.0, 1.1, 0.9, 1.05, 0.95, 1.0, 1.1, 0.9, 5.0, 5.1, 4.9, 5.05, 4.95, 5.0])
    (change,) = watch_series(points, rule).changes
    assert change.position == 8 and change.first_position == change.last_position == 8


def test_a_step_after_a_flat_stretch_has_zero_jitter_and_is_still_placed() -> None:
    # jitter 0 before the step: the range is the places that fit exactly as well as the best
    points = [2.0] * 30 + [3.0] * 14
    (change,) = watch_series(points).changes
    assert change.jitter == 0.0 and change.jitter_ratio == math.inf
    assert change.position == change.first_position == change.last_position == 30


def test_a_run_too_early_to_judge_does_not_stop_the_search() -> None:
    # An outlier pair right at the start flags positions before min_back_points; the real step later
    # must still be found.
    rng = np.random.default_rng(3)
    points = rng.normal(0.0, 0.1, 80)
    points[2:4] += 3.0
    points[50:] += 1.0
    rule = WatchRule(back_points=16, fore_points=8, min_back_points=8, min_fore_points=4, alpha=1e-3)
    assert [c.position for c in watch_series(points, rule).changes] == [50]


def test_short_and_exact_length_series_verdicts_field_by_field() -> None:
    rule = WatchRule()
    short = [1.0, 1.2, 0.9, 1.1, 1.0]
    assert watch_series(short, rule) == SeriesVerdict((), jitter(short), False, 5)
    exact = list(np.linspace(1.0, 1.1, rule.min_points))
    verdict = watch_series(exact, rule)
    assert verdict.enough_history is True and verdict.points == rule.min_points
    long = list(np.random.default_rng(1).normal(0, 1, 50))
    assert watch_series(long, rule).points == 50 and watch_series(long, rule).enough_history is True
    with pytest.raises(StatsError, match=r"^a series holds a value that is not a finite number$"):
        watch_series([1.0, math.inf] * 10, rule)


def _share_case() -> tuple[np.ndarray, np.ndarray]:
    hits = np.array(([1, 1, 1, 1, 0] * 24) + ([2, 3] * 40), dtype=np.int64)  # 0.2, then 0.625
    return hits, np.full(hits.size, 4, dtype=np.int64)


def _loglik(hits: float, total: float) -> float:
    if total <= 0 or hits in (0, total):
        return 0.0
    share = hits / total
    return hits * math.log(share) + (total - hits) * math.log(1 - share)


def test_a_share_step_every_number_read_from_the_window_counts() -> None:
    hits, counts = _share_case()
    rule = WatchRule()
    (change,) = watch_shares(hits, counts, rule).changes
    back_points, fore_points = SHARE_WINDOWS[0] * rule.back_points, SHARE_WINDOWS[1] * rule.fore_points
    t = change.position
    assert 118 <= t <= 122
    low, high = max(0, t - back_points), min(hits.size, t + fore_points)
    back_hits, back_n = int(hits[low:t].sum()), int(counts[low:t].sum())
    fore_hits, fore_n = int(hits[t:high].sum()), int(counts[t:high].sum())
    assert (change.n_back, change.n_fore) == (t - low, high - t)
    before, after = back_hits / back_n, fore_hits / fore_n
    assert change.before_median == pytest.approx(before)
    assert change.shift == pytest.approx(after - before)
    p = sps.fisher_exact([[fore_hits, fore_n - fore_hits], [back_hits, back_n - back_hits]]).pvalue
    assert change.p == pytest.approx(p, rel=1e-9, abs=0.0) and p <= rule.alpha * SHARE_ALPHA_FACTOR
    z = sps.norm.isf(rule.alpha * SHARE_ALPHA_FACTOR / 2)
    wald = math.sqrt(before * (1 - before) / back_n + after * (1 - after) / fore_n)
    assert change.shift_ci == pytest.approx((after - before - z * wald, after - before + z * wald))
    per_point = math.sqrt(before * (1 - before) / float(np.mean(counts[low:t])))
    assert change.jitter == pytest.approx(per_point)
    assert change.jitter_ratio == pytest.approx(abs(after - before) / per_point)
    # the range: every cut of the stretch whose two-share fit is within 2 of the best's
    region_low = max(0, change.first_position - back_points)
    fits = {
        cut: _loglik(hits[region_low:cut].sum(), counts[region_low:cut].sum())
        + _loglik(hits[cut : region_low + 400].sum(), counts[cut : region_low + 400].sum())
        for cut in range(change.first_position - 3, change.last_position + 4)
        if region_low < cut < hits.size
    }
    assert change.first_position <= 120 <= change.last_position
    assert change.last_position - change.first_position <= 6
    assert max(fits, key=lambda c: fits[c]) in range(change.first_position, change.last_position + 1)


def test_share_series_too_short_or_bad_are_answered_field_by_field() -> None:
    rule = WatchRule()
    hits = np.array([1, 0, 2], dtype=np.int64)
    counts = np.array([4, 4, 4], dtype=np.int64)
    assert watch_shares(hits, counts, rule) == SeriesVerdict((), jitter(hits / counts), False, 3)
    with pytest.raises(
        StatsError, match=r"^a share series needs 0 <= hits <= counts and counts >= 1 per point$"
    ):
        watch_shares(np.array([5]), np.array([4]), rule)
    with pytest.raises(StatsError, match="0 <= hits"):
        watch_shares(np.array([-1, 1]), np.array([4, 4]), rule)
    # one boot a point is a share too
    ones = watch_shares(
        np.zeros(rule.min_points, dtype=np.int64), np.ones(rule.min_points, dtype=np.int64), rule
    )
    assert ones.enough_history is True and ones.points == rule.min_points
    with pytest.raises(StatsError, match="0 <= hits <= counts"):
        watch_shares(np.array([1, 1]), np.array([4]), rule)
    with pytest.raises(StatsError, match="counts >= 1"):
        watch_shares(np.array([0]), np.array([0]), rule)
    flat_hits, flat_counts = np.ones(60, dtype=np.int64), np.full(60, 4, dtype=np.int64)
    verdict = watch_shares(flat_hits, flat_counts, rule)
    assert verdict.changes == () and verdict.enough_history is True and verdict.points == 60
    assert verdict.jitter == jitter(flat_hits / flat_counts) == 0.0


def test_two_share_steps_are_both_found_the_second_judged_after_the_first() -> None:
    hits = np.array([0, 0, 1, 0, 0] * 30 + [3, 3, 4, 3, 3] * 30 + [0, 0, 1, 0, 0] * 30, dtype=np.int64)
    counts = np.full(hits.size, 4, dtype=np.int64)
    changes = watch_shares(hits, counts, WatchRule()).changes
    assert [c.first_position <= at <= c.last_position for c, at in zip(changes, (150, 300), strict=True)] == [
        True,
        True,
    ]
    assert changes[0].shift > 0 > changes[1].shift


def test_a_run_right_after_a_change_is_skipped_and_the_next_step_still_found() -> None:
    rng = np.random.default_rng(5)
    points = rng.normal(0.0, 0.1, 100)
    points[30:] += 1.0
    points[33:35] += 3.0  # a blip within min_back_points of the first change
    points[65:] += 1.0
    rule = WatchRule(back_points=16, fore_points=8, min_back_points=8, min_fore_points=4, alpha=1e-3)
    positions = [c.position for c in watch_series(points, rule).changes]
    assert positions[0] == 30 and positions[-1] == 65, positions
    assert all(b - a >= rule.min_back_points for a, b in itertools.pairwise(positions))

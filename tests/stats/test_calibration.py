"""The promises: A/A comparisons say "no difference" 95 % of the time at alpha 0.05, a shift is found
as often as the power advice said, and sequential sampling stopping on precision keeps alpha.

The 2000-fold simulations use ``batch`` (the verdict rule over rows); the first tests show that it
gives exactly ``compare``'s verdicts and ``precise_enough``'s decisions, ties included.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt
import pytest

from bootscope.stats.batch import SAME, shift_ci_rows, verdict_rows
from bootscope.stats.compare import FASTER, SLOWER, Options, compare
from bootscope.stats.power import n_for_power
from bootscope.stats.sequential import precise_enough

RUNS = 2000
Rows = npt.NDArray[np.float64]
Draw = Callable[[np.random.Generator, tuple[int, int]], Rows]
CODES = {FASTER: -1, "no significant difference": 0, SLOWER: 1}


def lognormal(rng: np.random.Generator, shape: tuple[int, int]) -> Rows:
    # Skewed like boot times: median 2 s, a long right tail.
    return 2.0 * rng.lognormal(0.0, 0.25, shape)


def bimodal(rng: np.random.Generator, shape: tuple[int, int]) -> Rows:
    # 30 % of boots take a slow path (say a probe that times out) 0.4 s later.
    return rng.normal(1.5, 0.03, shape) + (rng.random(shape) < 0.3) * 0.4


@pytest.mark.parametrize("ties", [False, True])
def test_batch_verdicts_equal_compare(ties: bool) -> None:
    rng = np.random.default_rng(1 if ties else 2)
    a = lognormal(rng, (150, 9))
    b = lognormal(rng, (150, 9)) * np.linspace(0.8, 1.2, 150)[:, None]
    if ties:
        a, b = np.round(a, 1), np.round(b, 1)  # seed 000's 0.1 s resolution
    batch = verdict_rows(a, b, 0.05)
    one_by_one = [
        CODES[compare(x, y, "x", "s", Options(power=False, bootstrap_resamples=0)).verdict]
        for x, y in zip(a, b, strict=True)
    ]
    assert batch.tolist() == one_by_one
    assert len(set(one_by_one)) == 3  # the check covered all three verdicts


def test_batch_precision_equals_precise_enough() -> None:
    rng = np.random.default_rng(4)
    a, b = np.round(lognormal(rng, (100, 12)), 2), np.round(lognormal(rng, (100, 12)), 2)
    _, low, high = shift_ci_rows(a, b, 0.05)
    batch = (high - low) / 2 <= 0.2 * np.abs(np.median(a, axis=1))
    single = [precise_enough(x, y, 0.2, 0.05) for x, y in zip(a, b, strict=True)]
    assert batch.tolist() == single
    assert 0 < sum(single) < len(single)


@pytest.mark.parametrize(("draw", "n"), [(lognormal, 10), (lognormal, 24), (bimodal, 15), (bimodal, 40)])
def test_a_a_false_positive_rate_is_alpha(draw: Draw, n: int) -> None:
    rng = np.random.default_rng(n)
    rate = float(np.mean(verdict_rows(draw(rng, (RUNS, n)), draw(rng, (RUNS, n)), 0.05) != SAME))
    assert 0.035 <= rate <= 0.065, rate


def seed_000_like(rng: np.random.Generator, shape: tuple[int, int]) -> Rows:
    # Seed 000's userspace times: about 8.5 s, read off a timer at 0.1 s resolution (many ties).
    return np.round(rng.normal(8.5, 0.35, shape), 1)


def icount_like(rng: np.random.Generator, shape: tuple[int, int]) -> Rows:
    # --icount boots: near-identical times, a handful of distinct values 1 ms apart.
    return np.round(1.2345 + rng.normal(0.0, 0.0008, shape), 3)


@pytest.mark.parametrize("draw", [seed_000_like, icount_like])
@pytest.mark.parametrize("n", [30, 50, 100])
def test_a_a_false_positive_rate_is_alpha_with_ties(draw: Draw, n: int) -> None:
    # Beyond 50 values in all: the tie-corrected normal approximation, and intervals ending on a mass
    # of zero differences (compare's verdict rule).
    rng = np.random.default_rng(n)
    rate = float(np.mean(verdict_rows(draw(rng, (RUNS, n)), draw(rng, (RUNS, n)), 0.05) != SAME))
    assert 0.035 <= rate <= 0.065, rate


def test_a_a_false_positive_rate_small_tied_samples_is_exact() -> None:
    # 10 a side with ties: the exact distribution conditional on the ties. With seed 000's resolution
    # the rate is alpha; with 4-6 distinct --icount values the discrete law cannot reach alpha exactly
    # and an exact test stays below it, never above.
    rng = np.random.default_rng(10)
    rounded = verdict_rows(seed_000_like(rng, (RUNS, 10)), seed_000_like(rng, (RUNS, 10)), 0.05)
    assert 0.035 <= float(np.mean(rounded != SAME)) <= 0.065
    icount = verdict_rows(icount_like(rng, (RUNS, 10)), icount_like(rng, (RUNS, 10)), 0.05)
    assert 0.02 <= float(np.mean(icount != SAME)) <= 0.055


@pytest.mark.parametrize("draw", [seed_000_like, icount_like])
def test_a_shift_of_a_few_resolution_steps_is_found_with_ties(draw: Draw) -> None:
    # The other half of the promise: the rule that keeps alpha must not be blind. A shift of about
    # 0.6 standard deviations (two 0.1 s steps; one 1 ms --icount step) at 100 a side is found most of
    # the time (power about 0.97), in the right direction.
    rng = np.random.default_rng(5)
    step = 0.2 if draw is seed_000_like else 0.001
    verdicts = verdict_rows(draw(rng, (500, 100)), draw(rng, (500, 100)) - step, 0.05)
    assert float(np.mean(verdicts == -1)) >= 0.8
    assert not np.any(verdicts == 1)


@pytest.mark.parametrize("draw", [lognormal, bimodal])
def test_power_advice_is_kept(draw: Draw) -> None:
    rng = np.random.default_rng(42)
    pilot_a, pilot_b = draw(rng, (1, 300))[0], draw(rng, (1, 300))[0]
    detect = -0.05 * float(np.median(pilot_a))  # b 5 % faster
    advice = n_for_power(pilot_a, pilot_b, detect, alpha=0.05, seed=3)
    assert advice.n_per_side is not None and advice.achieved_power >= 0.8
    n = advice.n_per_side
    found = verdict_rows(draw(rng, (RUNS, n)), draw(rng, (RUNS, n)) + detect, 0.05) != SAME
    assert abs(float(np.mean(found)) - advice.achieved_power) <= 0.05, (n, np.mean(found))


def test_sequential_stopping_on_precision_keeps_alpha() -> None:
    rng = np.random.default_rng(7)
    max_n, start = 40, 5
    a, b = lognormal(rng, (RUNS, max_n)), lognormal(rng, (RUNS, max_n))
    stop = np.full(RUNS, max_n)
    undecided = np.ones(RUNS, dtype=bool)
    for n in range(start, max_n):
        _, low, high = shift_ci_rows(a[undecided, :n], b[undecided, :n], 0.05)
        done = (high - low) / 2 <= 0.14 * np.abs(np.median(a[undecided, :n], axis=1))
        indices = np.flatnonzero(undecided)[done]
        stop[indices] = n
        undecided[indices] = False
    called = 0
    for n in np.unique(stop):
        group = stop == n
        called += int(np.sum(verdict_rows(a[group, :n], b[group, :n], 0.05) != SAME))
    # The rule stopped at many different sizes (it is sequential), yet the A/A error stays at alpha.
    assert len(np.unique(stop)) > 5
    assert 0.035 <= called / RUNS <= 0.065


def test_stopping_on_p_would_not_keep_alpha() -> None:
    # The contrast that motivates the rule: stop as soon as p < alpha, and A/A "finds" differences.
    rng = np.random.default_rng(9)
    a, b = lognormal(rng, (RUNS, 40)), lognormal(rng, (RUNS, 40))
    ever = np.zeros(RUNS, dtype=bool)
    for n in range(5, 41, 5):
        ever |= verdict_rows(a[:, :n], b[:, :n], 0.05) != SAME
    assert np.mean(ever) > 0.10


def test_precise_enough_by_hand() -> None:
    # Seed-000 sides: the 95 % interval [-0.8, 0.0] has half-width 0.4 = 4.6 % of a's median 8.7.
    a = [8.7, 8.4, 8.6, 8.2, 9.0, 8.7, 8.8, 9.3, 8.8, 8.3]
    b = [8.5, 8.2, 7.6, 8.2, 8.7, 8.2, 7.8, 8.2, 9.3, 8.4]
    assert precise_enough(a, b, 0.047, 0.05)
    assert not precise_enough(a, b, 0.045, 0.05)
    assert not precise_enough(a[:4], b[:4], 1.0, 0.05)  # fewer than 5 a side

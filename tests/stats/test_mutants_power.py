"""Tests that kill mutants mutmut found surviving in bootscope/stats/power.py (make mutation): each
asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from bootscope.errors import StatsError
from bootscope.stats import power
from bootscope.stats.power import n_for_power, simulated_power

# Both sides 0, 1, 2 (median 1): the pooled residuals are -1, 0, 1, so every simulated a value lies
# in [-1, 1]. A shift of 100 puts every simulated b value in [99, 101] (or [-101, -99]): every
# simulated comparison is completely separated, whatever the draws, and its power is exactly 0 or 1.
SIDE = [0.0, 1.0, 2.0]
FAR = 100.0
# Smallest Mann-Whitney p of n against n completely separated values: 1 / C(2n, n) one-sided, twice
# that two-sided. C(4, 2) = 6, C(6, 3) = 20, C(8, 4) = 70, C(10, 5) = 252, C(12, 6) = 924.
# alpha = 0.02: one-sided 4 a side reach it (1/70 = 0.0143), two-sided they do not (2/70 = 0.0286),
# and 3 a side do not one-sided (1/20 = 0.05).
ONE_SIDED_ONLY_ALPHA = 0.02


# --- simulated_power ----------------------------------------------------------------------------


def test_power_less_finds_a_positive_detect_as_b_below_a() -> None:
    # "less": the shift is -|detect| = -100 whatever the sign given; b lies 100 below a, p = 1/70
    # < 0.02 in every row, so every row is called.
    assert simulated_power(SIDE, SIDE, FAR, 4, ONE_SIDED_ONLY_ALPHA, 1, 120, "less") == 1.0


def test_power_greater_finds_a_negative_detect_as_b_above_a() -> None:
    # "greater": the shift is |detect| = +100; b lies 100 above a, p = 1/70 < 0.02 in every row.
    assert simulated_power(SIDE, SIDE, -FAR, 4, ONE_SIDED_ONLY_ALPHA, 1, 120, "greater") == 1.0


def test_power_two_sided_cannot_call_what_only_a_one_sided_test_can() -> None:
    # Two-sided at 4 a side: the smallest p is 2/70 = 0.0286, not below 0.02: no row is called.
    assert simulated_power(SIDE, SIDE, FAR, 4, ONE_SIDED_ONLY_ALPHA, 1, 120) == 0.0


@pytest.mark.parametrize("func", ["simulated", "n_for"])
def test_a_nan_names_the_side_that_holds_it(func: str) -> None:
    def call(a: list[float], b: list[float]) -> object:
        if func == "simulated":
            return simulated_power(a, b, FAR, 4, 0.05, 1, 10)
        return n_for_power(a, b, FAR, 0.05, 1, replicates=10, max_n=4)

    with pytest.raises(StatsError, match=r"^side a holds a NaN"):
        call([0.0, float("nan")], SIDE)
    with pytest.raises(StatsError, match=r"^side b holds a NaN"):
        call(SIDE, [float("nan"), 1.0])


# --- n_for_power: argument checks and the advice's fields ----------------------------------------


def test_n_for_power_refuses_a_zero_detect() -> None:
    with pytest.raises(StatsError, match="must not be zero"):
        n_for_power(SIDE, SIDE, 0.0, 0.05, 1, replicates=10, max_n=4)


def test_n_for_power_accepts_a_detect_of_one() -> None:
    # Residuals -0.01, 0, 0.01; a shift of 1 separates every row. Two-sided alpha 0.05: 3 a side
    # cannot (2/20 = 0.1), 4 a side can (2/70 = 0.0286).
    advice = n_for_power([0.0, 0.01, 0.02], [0.0, 0.01, 0.02], 1.0, 0.05, 1, replicates=120, max_n=16)
    assert advice.n_per_side == 4
    assert advice.detect == 1.0
    assert advice.achieved_power == 1.0


def test_target_power_reached_exactly_is_enough_in_both_searches() -> None:
    # Two-sided alpha 0.01: 4 a side cannot (2/70 = 0.0286), 5 a side can (2/252 = 0.0079), and then
    # every row is called: power exactly 1.0 = the target. Search: 2 (0), 4 (0), 8 (1.0 >= 1.0: stop
    # doubling); halving between 4 and 8: 6 (1.0 >= 1.0: high = 6), 5 (1.0: high = 5). n = 5.
    advice = n_for_power(SIDE, SIDE, FAR, 0.01, 1, target_power=1.0, replicates=120, max_n=16)
    assert advice == power.PowerAdvice(
        detect=FAR, target_power=1.0, n_per_side=5, achieved_power=1.0, max_n=16
    )


@pytest.mark.parametrize(("detect", "alternative"), [(FAR, "less"), (-FAR, "greater")])
def test_one_sided_search_uses_the_one_sided_floor_and_verdict(detect: float, alternative: str) -> None:
    # One-sided alpha 0.02: 3 a side cannot (1/20 = 0.05), 4 a side can (1/70 = 0.0143) and every row
    # is called. Search: 2 (0), 4 (1.0); halving: 3 (0). n = 4. (Two-sided, 4 a side could not.)
    advice = n_for_power(
        SIDE, SIDE, detect, ONE_SIDED_ONLY_ALPHA, 1, replicates=120, max_n=16, alternative=alternative
    )
    assert advice.n_per_side == 4
    assert advice.achieved_power == 1.0
    assert advice.detect == detect
    assert advice.target_power == 0.8
    assert advice.max_n == 16


def _guarded(real: Callable[..., float], limit: int) -> Callable[..., float]:
    calls = [0]

    def wrapper(*args: object) -> float:
        calls[0] += 1
        if calls[0] > limit:
            raise AssertionError(f"the search did not stop after {limit} sizes")
        return real(*args)

    return wrapper


def test_search_stops_at_max_n_when_it_is_not_a_power_of_two(monkeypatch: pytest.MonkeyPatch) -> None:
    # Two-sided alpha 0.001: 6 a side cannot reach it (2/924 = 0.00216), so no size up to max_n = 6
    # has power: 2, 4, 6 (= max_n) are tried, then the advice is "none", achieved 0.0.
    monkeypatch.setattr(power, "smallest_p", _guarded(power.smallest_p, 20))
    advice = n_for_power(SIDE, SIDE, FAR, 0.001, 1, replicates=120, max_n=6)
    assert advice.n_per_side is None
    assert advice.achieved_power == 0.0
    assert advice.max_n == 6


def test_a_size_whose_floor_equals_alpha_is_not_simulated(monkeypatch: pytest.MonkeyPatch) -> None:
    # The module's promise: a size whose smallest possible p is not below alpha has power 0 without a
    # simulation. alpha = 2/70 is exactly the two-sided floor of 4 a side (2 / C(8, 4)).
    tried: list[int] = []
    real = power.verdict_rows

    def counting(a: np.ndarray, b: np.ndarray, alpha: float, alternative: str = "two-sided") -> np.ndarray:
        tried.append(a.shape[1])
        return real(a, b, alpha, alternative)

    monkeypatch.setattr(power, "verdict_rows", counting)
    advice = n_for_power(SIDE, SIDE, FAR, 2 / 70, 1, replicates=120, max_n=16)
    # 2 (1/3), 4 (2/70, not below): 0 unsimulated; 8: 1.0; halving: 6: 1.0, 5 (2/252): 1.0. n = 5.
    assert 4 not in tried
    assert advice.n_per_side == 5


# --- the screen: the first 100 draws of a size, and a margin of 0.3 under the target --------------
# The simulation is replaced by rows that carry their replicate number, and the verdict by a fixed
# set of called replicates, so the screen's figures are known by hand.


def _fixed_simulation(monkeypatch: pytest.MonkeyPatch, called: set[int]) -> None:
    sizes_simulated: list[int] = []

    def draws(
        x: object, y: object, detect: float, n: int, seed: int, replicates: int, alternative: str
    ) -> tuple[np.ndarray, np.ndarray]:
        sizes_simulated.append(n)
        if len(sizes_simulated) > 20:  # a search up to max_n = 16 simulates at most 6 sizes
            raise AssertionError(f"the search did not stop: sizes {sizes_simulated}")
        rows = np.repeat(np.arange(replicates, dtype=np.float64)[:, None], n, axis=1)
        return rows, rows.copy()

    def verdicts(a: np.ndarray, b: np.ndarray, alpha: float, alternative: str = "two-sided") -> np.ndarray:
        ids = a[:, 0].astype(np.int64)
        return np.where(np.isin(ids, sorted(called)), 1, 0).astype(np.int64)

    monkeypatch.setattr(power, "_draws", draws)
    monkeypatch.setattr(power, "verdict_rows", verdicts)


def test_a_screen_exactly_at_the_margin_goes_on_to_the_full_simulation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Replicates 0..19 and 100..199 called, of 200. Screen (replicates 0..99): 20/100 = 0.2, which is
    # target 0.5 - margin 0.3 = 0.2 exactly, not below it: the full figure 120/200 = 0.6 >= 0.5 counts.
    # Two-sided alpha 0.05: 2 a side (1/3) and 3 a side (0.1) cannot reach it, so n = 4.
    assert 0.5 - 0.3 == 0.2
    _fixed_simulation(monkeypatch, set(range(20)) | set(range(100, 200)))
    advice = n_for_power(SIDE, SIDE, FAR, 0.05, 1, target_power=0.5, replicates=200, max_n=16)
    assert advice.n_per_side == 4
    assert advice.achieved_power == 0.6


def test_a_screen_far_short_rejects_the_size_without_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    # Replicates 100..199 called, of 200: the screen (0..99) finds 0/100 = 0 < 0.5 - 0.3, so every
    # size is taken as too small although the full figure would be 100/200 = 0.5 = the target. At
    # max_n the full figure is reported: 0.5, no n.
    _fixed_simulation(monkeypatch, set(range(100, 200)))
    advice = n_for_power(SIDE, SIDE, FAR, 0.05, 1, target_power=0.5, replicates=200, max_n=16)
    assert advice.n_per_side is None
    assert advice.achieved_power == 0.5

"""Tests that kill mutants mutmut found surviving in bootscope/stats/resolution.py (make mutation):
each asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

import itertools
import math

import pytest
from pair_loops import met_matrix
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats.resolution import (
    PairMoments,
    boots_needed,
    critical_count,
    pair_moments,
    pass_power,
    resolution,
)

NAN = float("nan")

# The searches of resolution() and boots_needed() must end: a mutant that loops for ever fails here
# (each test takes well under a second; 60 s leaves a loaded CI host room) instead of only timing out
# in mutmut.
ENDS = pytest.mark.timeout(60)


# --- a separate simple reader: brute force over every placement, plain loops, scipy's normal ----


def _brute_critical(n_ref: int, n_new: int, alpha: float) -> float:
    """Smallest w with P(W >= w) <= alpha, W = #(ref, new) pairs with ref < new, counted over every
    placement of the new boots among the n_ref + n_new ranks (all equally likely without ties)."""
    counts: dict[int, int] = {}
    for positions in itertools.combinations(range(n_ref + n_new), n_new):
        # the j-th new boot (0-based) at rank p has p - j reference boots below it
        w = sum(p - j for j, p in enumerate(positions))
        counts[w] = counts.get(w, 0) + 1
    placements = math.comb(n_ref + n_new, n_new)
    found = math.inf
    tail = 0
    for w in range(n_ref * n_new, 0, -1):
        tail += counts.get(w, 0)
        if tail / placements > alpha:
            break
        found = float(w)
    return found


def _loop_power(ref: list[float], margin: float, n_new: int, alpha: float) -> float:
    k = len(ref)
    met = met_matrix(ref, margin)
    per_new = [sum(met[a]) / (k - 1) for a in range(k)]
    per_ref = [sum(met[a][b] for a in range(k)) / (k - 1) for b in range(k)]
    theta = sum(per_new) / k
    q_new = sum(v * v for v in per_new) / k
    q_ref = sum(v * v for v in per_ref) / k
    critical = _brute_critical(k, n_new, alpha)
    if math.isinf(critical):
        return 0.0
    mean = k * n_new * theta
    variance = (
        k * n_new * (theta * (1 - theta) + (k - 1) * (q_new - theta**2) + (n_new - 1) * (q_ref - theta**2))
    )
    if variance <= 1e-12:
        return 1.0 if mean >= critical else 0.0
    return float(sps.norm.sf(critical - 0.5, loc=mean, scale=math.sqrt(variance)))


def _linear_scan_resolution(ref: list[float], n_new: int, alpha: float, power: float) -> float | None:
    margins = sorted({max(a - b, 0.0) for i, a in enumerate(ref) for j, b in enumerate(ref) if i != j})
    margins.append(math.nextafter(margins[-1], math.inf))
    for margin in margins:
        if _loop_power(ref, margin, n_new, alpha) >= power:
            return margin
    return None


def test_the_brute_force_reader_agrees_with_hand_counts() -> None:
    # 2 against 2: W = 0, 1, 2, 3, 4 in 1, 1, 2, 1, 1 of the 6 placements.
    assert _brute_critical(2, 2, 0.2) == 4.0  # P(W >= 4) = 1/6 <= 0.2 < P(W >= 3) = 2/6
    assert _brute_critical(2, 2, 0.1) == math.inf


# --- pair_moments ----------------------------------------------------------------------------


def test_pair_moments_count_a_difference_equal_to_the_margin_as_half() -> None:
    # x = [1, 2, 4], margin 1; met[k][i] for x_k - x_i (k a new boot, i a reference boot):
    #   k=1: 1-2=-1 -> 1, 1-4=-3 -> 1             per_new 2/2 = 1
    #   k=2: 2-1=+1 == margin -> 0.5, 2-4 -> 1    per_new 1.5/2 = 0.75
    #   k=4: 4-1=3 -> 0, 4-2=2 -> 0              per_new 0
    # theta = 1.75/3 = 7/12; q_new = (1 + 0.5625 + 0)/3 = 25/48
    # per_ref: i=1: (0.5 + 0)/2 = 0.25, i=2: (1 + 0)/2 = 0.5, i=4: (1 + 1)/2 = 1
    # q_ref = (0.0625 + 0.25 + 1)/3 = 7/16
    got = pair_moments([1.0, 2.0, 4.0], 1.0)
    assert got.theta == pytest.approx(7 / 12)
    assert got.q_new == pytest.approx(25 / 48)
    assert got.q_ref == pytest.approx(7 / 16)


def test_pair_moments_name_the_reference_side_in_the_nan_error() -> None:
    with pytest.raises(StatsError, match="side reference holds a NaN"):
        pair_moments([1.0, NAN, 2.0], 0.1)


# --- critical_count ----------------------------------------------------------------------------


def test_critical_count_is_exact_at_fifty_boots_on_one_side() -> None:
    # 50 is still exact: brute force over the C(52, 2) = 1326 placements gives 86, where the normal
    # approximation would give 50 + 1.645 * sqrt(100 * 53 / 12) + 0.5 = 85.07.
    assert critical_count(2, 50, 0.05) == _brute_critical(2, 50, 0.05) == 86.0


def test_critical_count_can_reject_at_a_single_pair() -> None:
    # 2 against 2: P(W >= 1) = 5/6 = 0.833 <= 0.9, so one pair is already enough.
    assert critical_count(2, 2, 0.9) == 1.0


def test_critical_count_can_need_every_pair() -> None:
    # 2 against 2: P(W >= 4) = 1/6 <= 0.2 < P(W >= 3) = 2/6: all 4 pairs.
    assert critical_count(2, 2, 0.2) == 4.0


def test_critical_count_is_infinite_when_not_even_all_pairs_are_rare_enough() -> None:
    # 2 against 2: the rarest W = 4 still has P = 1/6 > 0.1; W = 5 pairs does not exist.
    assert critical_count(2, 2, 0.1) == math.inf


def test_critical_count_rejects_when_the_tail_equals_alpha() -> None:
    # 1 against 3: W = 0..3 each with P = 1/4 (binary exact); P(W >= 3) = 0.25 <= 0.25.
    assert critical_count(1, 3, 0.25) == 3.0


def test_critical_count_beyond_fifty_uses_the_normal_approximation_with_continuity() -> None:
    # 60 against 60: total 3600, sd = sqrt(3600 * 121 / 12) = sqrt(36300) = 110 * sqrt(3),
    # critical = 3600/2 + z_0.95 * sd + 0.5.
    expected = 1800.0 + float(sps.norm.ppf(0.95)) * 110.0 * math.sqrt(3.0) + 0.5
    assert critical_count(60, 60, 0.05) == pytest.approx(expected, abs=1e-6)


# --- pass_power --------------------------------------------------------------------------------


@pytest.mark.parametrize(("n_reference", "n_new"), [(1, 5), (5, 1)])
def test_pass_power_needs_two_boots_on_each_side(n_reference: int, n_new: int) -> None:
    with pytest.raises(StatsError, match="at least 2 reference and 2 new boots"):
        pass_power(PairMoments(0.5, 0.3, 0.3), n_reference, n_new, 0.05)


@pytest.mark.parametrize("alpha", [0.0, 1.0, 1.5])
def test_pass_power_rejects_alpha_outside_the_open_unit_interval(alpha: float) -> None:
    with pytest.raises(StatsError, match="alpha must lie between 0 and 1"):
        pass_power(PairMoments(0.5, 0.3, 0.3), 5, 5, alpha)


def test_pass_power_uses_lehmanns_variance_and_the_continuity_correction() -> None:
    # 3 against 4 (35 placements): W = 12, 11, 10, 9 in 1, 1, 2, 3 of them, so
    # P(W >= 10) = 4/35 = 0.114 <= 0.15 < P(W >= 9) = 7/35: critical 10.
    # mean = 12 * 0.7 = 8.4
    # variance = 12 * (0.7*0.3 + 2*(0.55 - 0.49) + 3*(0.52 - 0.49)) = 12 * 0.42 = 5.04
    # power = P(N(8.4, 5.04) > 10 - 0.5)
    expected = float(sps.norm.sf(9.5, loc=8.4, scale=math.sqrt(5.04)))
    assert expected == pytest.approx(0.312, abs=1e-3)
    assert pass_power(PairMoments(0.7, 0.55, 0.52), 3, 4, 0.15) == pytest.approx(expected, abs=1e-9)


def test_pass_power_is_one_half_when_the_mean_sits_on_the_corrected_critical_value() -> None:
    # 2 against 2 at alpha 0.2: critical 4. theta = 7/8, q = 49/64 = theta^2:
    # mean = 4 * 7/8 = 3.5 = 4 - 0.5, variance = 4 * (7/8 * 1/8) = 0.4375 (small but not zero),
    # so the power is exactly one half, not the 0/1 of a degenerate W.
    got = pass_power(PairMoments(0.875, 0.765625, 0.765625), 2, 2, 0.2)
    assert got == pytest.approx(0.5, abs=1e-12)


def test_pass_power_of_a_certain_count_reaching_the_critical_value_is_one() -> None:
    # Every pair met (theta = q = 1): variance 0 and W = 4 always, equal to the critical 4.
    assert pass_power(PairMoments(1.0, 1.0, 1.0), 2, 2, 0.2) == 1.0


def test_pass_power_of_a_certain_zero_count_is_zero() -> None:
    # No pair met (theta = q = 0): variance 0 and W = 0 always, below the critical 4.
    assert pass_power(PairMoments(0.0, 0.0, 0.0), 2, 2, 0.2) == 0.0


# --- _check (through resolution and boots_needed) -----------------------------------------------


BAD_LEVELS = [(0.05, 1.5), (0.0, 0.9), (1.0, 0.9), (1.5, 0.9), (0.05, 0.0), (0.05, 1.0)]


@pytest.mark.parametrize(("alpha", "power"), BAD_LEVELS)
def test_resolution_rejects_alpha_or_power_outside_the_open_unit_interval(alpha: float, power: float) -> None:
    with pytest.raises(StatsError, match="alpha and power must lie between 0 and 1"):
        resolution([1.0, 2.0, 4.0], 4, alpha, power)


@pytest.mark.parametrize(("alpha", "power"), BAD_LEVELS)
def test_boots_needed_rejects_alpha_or_power_outside_the_open_unit_interval(
    alpha: float, power: float
) -> None:
    with pytest.raises(StatsError, match="alpha and power must lie between 0 and 1"):
        boots_needed([1.0, 2.0, 4.0], 1.0, alpha, power)


# --- resolution --------------------------------------------------------------------------------


def test_resolution_names_the_reference_side_in_the_nan_error() -> None:
    with pytest.raises(StatsError, match="side reference holds a NaN"):
        resolution([1.0, NAN, 2.0], 4, 0.05)


def test_resolution_rejects_a_single_reference_boot() -> None:
    with pytest.raises(StatsError, match="at least 2 reference and 2 new boots"):
        resolution([1.0], 4, 0.05)


@ENDS
def test_resolution_of_two_boots_can_be_just_above_their_difference() -> None:
    # Reference [1, 2], 10 new boots, alpha 0.05: critical(2, 10) = 19 (P(W >= 19) = 2/66,
    # P(W >= 18) = 4/66 > 0.05). At margin 1 the difference 2 - 1 ties (half): theta = 0.75,
    # mean 15, variance 20 * (0.1875 + 0.0625 + 9 * 0.0625) = 16.25,
    # power = P(N(15, 16.25) > 18.5) = 0.19 < 0.9. Just above 1 every pair is met: W = 20, power 1.
    assert _loop_power([1.0, 2.0], 1.0, 10, 0.05) == pytest.approx(0.19, abs=0.01)
    assert resolution([1.0, 2.0], 10, 0.05) == math.nextafter(1.0, math.inf)


@ENDS
def test_resolution_of_two_boots_can_be_their_difference() -> None:
    # Reference [1, 2], 3 new boots, alpha 0.25: critical(2, 3) = 5 (P(W >= 5) = 2/10,
    # P(W >= 4) = 4/10). Margin 0: theta 0.5, mean 3, variance 6 * 1.0 = 6,
    # power = P(N(3, 6) > 4.5) = 0.270. Margin 1: theta 0.75, mean 4.5,
    # variance 6 * (0.1875 + 0.0625 + 2 * 0.0625) = 2.25, power = P(N(4.5, 2.25) > 4.5) = 0.5.
    assert resolution([1.0, 2.0], 3, 0.25, power=0.4) == 1.0


@ENDS
def test_resolution_of_two_boots_can_be_zero() -> None:
    # As above: at margin 0 the power is 0.270 >= 0.2 already.
    assert resolution([1.0, 2.0], 3, 0.25, power=0.2) == 0.0


@ENDS
def test_resolution_counts_a_power_exactly_reached() -> None:
    # As above: at margin 1 the power is exactly 1/2 (the mean on the corrected critical value).
    assert resolution([1.0, 2.0], 3, 0.25, power=0.5) == 1.0


SIX = [1.00, 1.03, 1.07, 1.12, 1.20, 1.31]  # 17 candidate margins (16 differences >= 0, beyond)


@ENDS
@pytest.mark.parametrize(("n_new", "power"), [(3, 0.5), (4, 0.9), (6, 0.3), (8, 0.7)])
def test_resolution_matches_a_linear_scan_of_every_pair_difference(n_new: int, power: float) -> None:
    expected = _linear_scan_resolution(SIX, n_new, 0.05, power)
    assert expected is not None and 0.0 < expected < 0.31
    assert resolution(SIX, n_new, 0.05, power) == expected


# --- boots_needed ------------------------------------------------------------------------------


def test_boots_needed_names_the_reference_side_in_the_nan_error() -> None:
    with pytest.raises(StatsError, match="side reference holds a NaN"):
        boots_needed([1.0, NAN, 2.0], 0.1, 0.05)


@ENDS
def test_boots_needed_can_be_two() -> None:
    # Reference [1, 2] at margin 5: every pair met, W = 2 n_new always. alpha 0.25: critical(2, 2)
    # = 4 (P(W >= 4) = 1/6) and critical(2, 3) = 5 (P(W >= 5) = 2/10): power 1 for 2 and 3 boots.
    assert boots_needed([1.0, 2.0], 5.0, 0.25, max_boots=3) == 2


@ENDS
def test_boots_needed_counts_a_power_exactly_reached() -> None:
    # Reference [1, 2] at margin 1, alpha 0.25 (see the resolution tests): 2 boots give
    # P(N(3, 1.25) > 3.5) = 0.327 (critical 4, variance 4 * (0.1875 + 0.0625 + 0.0625) = 1.25);
    # 3 boots give exactly 0.5.
    assert _loop_power([1.0, 2.0], 1.0, 2, 0.25) == pytest.approx(0.327, abs=1e-3)
    assert boots_needed([1.0, 2.0], 1.0, 0.25, power=0.5, max_boots=3) == 3


def test_boots_needed_is_the_smallest_count_although_power_dips() -> None:
    # Power does not grow steadily with the new boots: the exact critical count steps at each size.
    # Reference [1, 2], margin 1, alpha 0.25, by the simple reader: 0.327, 0.5, 0.395, 0.5, 0.576 for
    # 2..6 new boots. Bisection over 2..10 000 returned 5; the smallest count that is enough is 3.
    powers = [_loop_power([1.0, 2.0], 1.0, n, 0.25) for n in range(2, 7)]
    assert powers == pytest.approx([0.327, 0.5, 0.395, 0.5, 0.576], abs=1e-3)
    assert boots_needed([1.0, 2.0], 1.0, 0.25, power=0.5) == 3
    # and with a realistic target: the smallest n_new that the simple reader finds, scanning upwards
    noisy = [1.0, 1.3, 0.7, 1.1, 0.95, 1.4, 0.8, 1.05]
    first = next(n for n in range(2, 40) if _loop_power(noisy, 0.525, n, 0.1) >= 0.95)
    assert boots_needed(noisy, 0.525, 0.1, power=0.95) == first

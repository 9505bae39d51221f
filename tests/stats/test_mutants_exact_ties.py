"""Tests that kill mutants mutmut found surviving in bootscope/stats/exact_ties.py
(make mutation): each asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as sps

from bootscope.stats.exact_ties import tied_interval_ranks, tied_p_value


def _u2_law(groups: tuple[int, ...], m: int) -> dict[int, Fraction]:
    """P(U2 = u2) by enumerating every choice of m pooled positions as b (mid-ranks from scipy)."""
    pooled = np.repeat(np.arange(len(groups), dtype=float), groups)
    doubled_ranks = [round(2 * r) for r in sps.rankdata(pooled)]
    splits = list(itertools.combinations(range(pooled.size), m))
    counts = Counter(sum(doubled_ranks[i] for i in chosen) - m * (m + 1) for chosen in splits)
    return {u2: Fraction(c, len(splits)) for u2, c in sorted(counts.items())}


def test_hand_laws_match_enumeration() -> None:
    # (2, 1), m = 1: pooled x x y; b is a tied x (U = 1/2, U2 = 1) 2 ways in 3, or y (U = 2, U2 = 4).
    assert _u2_law((2, 1), 1) == {1: Fraction(2, 3), 4: Fraction(1, 3)}
    # (1, 2, 1), m = 1: doubled mid-ranks 2, 5, 5, 8, minus m(m + 1) = 2: U2 = 0, 3, 3, 6.
    assert _u2_law((1, 2, 1), 1) == {0: Fraction(1, 4), 3: Fraction(1, 2), 6: Fraction(1, 4)}
    # (3, 1), m = 1: doubled mid-ranks 4, 4, 4, 8: U2 = 2 (3 ways in 4) or 6.
    assert _u2_law((3, 1), 1) == {2: Fraction(3, 4), 6: Fraction(1, 4)}
    # (1, 3), m = 1: doubled mid-ranks 2, 6, 6, 6: U2 = 0 (1 way in 4) or 4.
    assert _u2_law((1, 3), 1) == {0: Fraction(1, 4), 4: Fraction(3, 4)}


def test_p_value_of_u2_below_the_support_is_zero_below_and_one_above() -> None:
    # (2, 1), m = 1: U2 is 1 or 4, so P(U2 <= 0) = 0 and P(U2 >= 0) = 1; two-sided 2 * min = 0.
    assert tied_p_value((2, 1), 1, 0, "less") == 0.0
    assert tied_p_value((2, 1), 1, 0, "greater") == 1.0
    assert tied_p_value((2, 1), 1, 0, "two-sided") == 0.0


def test_greater_p_value_includes_the_observed_value() -> None:
    # (2, 1), m = 1: P(U2 >= 4) = 1/3 (b is y), P(U2 >= 1) = 1.
    assert tied_p_value((2, 1), 1, 4, "greater") == pytest.approx(1 / 3)
    assert tied_p_value((2, 1), 1, 1, "greater") == pytest.approx(1.0)
    # (1, 2, 1), m = 1: P(U2 >= 3) = 1/2 + 1/4 = 3/4, P(U2 >= 6) = 1/4.
    assert tied_p_value((1, 2, 1), 1, 3, "greater") == pytest.approx(0.75)
    assert tied_p_value((1, 2, 1), 1, 6, "greater") == pytest.approx(0.25)


def test_two_sided_p_value_is_capped_at_one() -> None:
    # (1, 2, 1), m = 1, U2 = 3 (the middle atom): P(U2 <= 3) = P(U2 >= 3) = 3/4; 2 * 3/4 = 1.5 -> 1.
    assert tied_p_value((1, 2, 1), 1, 3, "two-sided") == 1.0


def test_interval_ranks_three_a_side_without_ties() -> None:
    # n = m = 3, no ties: C(6, 3) = 20 splits, U counts 1, 1, 2, 3, 3, 3, 3, 2, 1, 1 for U = 0..9.
    # P(U <= 0) = 1/20 = 0.05 <= alpha/2 = 0.05, P(U <= 1) = 2/20 > 0.05: k_high = 1; symmetric, k_low = 1.
    # Coverage 1 - 0.05 - 0.05 = 0.9. scipy's exact one-sided p of the extreme split is that 0.05.
    extreme = sps.mannwhitneyu([4.0, 5.0, 6.0], [1.0, 2.0, 3.0], alternative="greater", method="exact")
    assert extreme.pvalue == pytest.approx(0.05)
    k_low, k_high, coverage = tied_interval_ranks((1,) * 6, 3, 3, 0.1)
    assert (k_low, k_high) == (1, 1)
    assert coverage == pytest.approx(0.9)


def test_interval_ranks_with_a_tied_top_group() -> None:
    # (3, 1), m = 1, n_a = 3: U_b = 1 (prob 3/4) or 3 (1/4); U_a = 3 - U_b = 2 or 0.
    # k_high: P(U_b <= 0) = 0 <= 0.25, P(U_b <= 1) = 0.75: 1. k_low: P(U_a <= 0) = P(U_a <= 1) = 0.25,
    # P(U_a <= 2) = 1: 2. Coverage 1 - P(U_b <= 0) - P(U_a <= 1) = 1 - 0 - 0.25 = 0.75.
    k_low, k_high, coverage = tied_interval_ranks((3, 1), 1, 3, 0.5)
    assert (k_low, k_high) == (2, 1)
    assert coverage == pytest.approx(0.75)


def test_interval_ranks_with_a_tied_bottom_group() -> None:
    # (1, 3), m = 1, n_a = 3: U_b = 0 (prob 1/4) or 2 (3/4); U_a = 3 or 1.
    # k_high: P(U_b <= 0) = P(U_b <= 1) = 0.25, P(U_b <= 2) = 1: 2. k_low: P(U_a <= 0) = 0,
    # P(U_a <= 1) = 0.75: 1. Coverage 1 - P(U_b <= 1) - P(U_a <= 0) = 1 - 0.25 - 0 = 0.75.
    k_low, k_high, coverage = tied_interval_ranks((1, 3), 1, 3, 0.5)
    assert (k_low, k_high) == (1, 2)
    assert coverage == pytest.approx(0.75)


def test_interval_ranks_count_a_tail_equal_to_the_tolerant_bound() -> None:
    # alpha = 0.499999999998: alpha/2 + 1e-12 rounds to exactly 0.25 in binary64, so a tail of exactly
    # 1/4 is still within alpha/2 (<=): the same ranks and coverage as at alpha = 0.5 above.
    alpha = 0.499999999998
    assert alpha / 2 + 1e-12 == 0.25
    k_low, k_high, coverage = tied_interval_ranks((1, 3), 1, 3, alpha)
    assert (k_low, k_high) == (1, 2)
    assert coverage == pytest.approx(0.75)
    k_low, k_high, coverage = tied_interval_ranks((3, 1), 1, 3, alpha)
    assert (k_low, k_high) == (2, 1)
    assert coverage == pytest.approx(0.75)

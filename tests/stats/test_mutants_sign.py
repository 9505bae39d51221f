"""Tests that kill mutants mutmut found surviving in bootscope/stats/sign.py (make mutation):
each asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

import math

import pytest
from scipy import stats as sps

from bootscope import model
from bootscope.errors import StatsError
from bootscope.stats.sign import decision_p, resolution, sign_test

SEED_A = [8.7, 8.4, 8.6, 8.2, 9.0, 8.7, 8.8, 9.3, 8.8, 8.3]
SEED_B = [8.5, 8.2, 7.6, 8.2, 8.7, 8.2, 7.8, 8.2, 9.3, 8.4]
FROM_DATA = "; direction from the data, two-sided p = "


def _tail(count: int, n: int) -> float:
    # P(X >= count), X ~ Binomial(n, 1/2), straight from scipy.
    return float(sps.binom.sf(count - 1, n, 0.5))


# --- resolution -------------------------------------------------------------------------------


def test_resolution_of_two_distinct_values_is_their_gap() -> None:
    # 8.3 - 8.2 = 0.09999999999999964 in binary; rounded to 12 digits: 0.1.
    assert resolution([8.2, 8.3]) == 0.1
    assert resolution([8.3], [8.2]) == 0.1


def test_resolution_of_equal_values_is_zero() -> None:
    assert resolution([5.0, 5.0, 5.0]) == 0.0
    assert resolution([5.0], [5.0]) == 0.0


def test_resolution_gap_is_rounded_to_twelve_digits() -> None:
    # 1000.3 - 1000.2 = 0.09999999999990905 in binary; to 12 digits 0.1 (to 13: 0.0999999999999).
    assert resolution([1000.2, 1000.3]) == 0.1


def test_resolution_merges_values_equal_to_twelve_digits() -> None:
    # 1 + 4e-13 rounds to 1.0 at 12 digits, so the distinct values are 1 and 2: step 1 (not 4e-13,
    # and not 0).
    assert resolution([1.0, 1.0 + 4e-13, 2.0]) == 1.0


def test_resolution_names_the_side_with_a_nan() -> None:
    with pytest.raises(StatsError, match=r"^side x holds a NaN or infinite value"):
        resolution([1.0, math.nan])


# --- sign_test: bad input ------------------------------------------------------------------------


def test_sign_test_names_side_a_when_it_holds_a_nan() -> None:
    with pytest.raises(StatsError, match=r"^side a holds a NaN or infinite value"):
        sign_test([math.nan, 1.0], [1.0, 2.0])


def test_sign_test_names_side_b_when_it_holds_an_infinity() -> None:
    with pytest.raises(StatsError, match=r"^side b holds a NaN or infinite value"):
        sign_test([1.0, 2.0], [1.0, math.inf])


# --- sign_test: counts, direction, p and the printed note ----------------------------------------


def test_sign_test_note_on_seed_000_says_eight_of_ten_each_way() -> None:
    # median(a) = 8.7, median(b) = 8.2, step 0.1. a - 8.2 > 0.1: 8.4 8.6 8.7 8.7 8.8 8.8 9.0 9.3 -> 8
    # (8.3 is exactly one step above: not counted); 8.7 - b > 0.1: 7.6 7.8 8.2x4 8.4 8.5 -> 8.
    # P(X >= 8) = 56/1024 = 0.0547 for both; two-sided 112/1024 = 0.1094.
    result = sign_test(SEED_A, SEED_B)
    assert result.p == pytest.approx(_tail(8, 10), rel=1e-12)
    assert result.p == pytest.approx(56 / 1024, rel=1e-12)
    assert result.alternative == "less"
    assert result.method == "sign test, margin 0.1"
    assert result.statistic == 8
    assert result.note == (
        "8/10 of a above b's median and 8/10 of b below a's median by more than 0.1; "
        "P(X >= 8), X ~ Bin(10, 1/2)" + FROM_DATA + "0.1094"
    )


G_A = [8.1, 8.2, 8.3, 8.6, 8.7]
G_B = [8.4, 8.5, 8.7, 8.9, 9.0]
# median(a) = 8.3, median(b) = 8.7, step 0.1 -> b slower: "greater".
# 8.7 - a > 0.1: 8.1 8.2 8.3 -> 3 (8.6 is one step below, 8.7 none): P(X >= 3) = 16/32 = 0.5
# b - 8.3 > 0.1: 8.5 8.7 8.9 9.0 -> 4 (8.4 is one step above): P(X >= 4) = 6/32.
# The larger tail is a's: count 3 of 5; two-sided min(1, 2 * 0.5) = 1.
G_NOTE = (
    "3/5 of a below b's median and 4/5 of b above a's median by more than 0.1; P(X >= 3), X ~ Bin(5, 1/2)"
)


def test_sign_test_note_when_b_is_slower_says_below_and_above() -> None:
    result = sign_test(G_A, G_B)
    assert result.p == pytest.approx(_tail(3, 5), rel=1e-12)
    assert result.p == pytest.approx(0.5, rel=1e-12)
    assert result.alternative == "greater"
    assert result.method == "sign test, margin 0.1"
    assert result.statistic == 3
    assert result.note == G_NOTE + FROM_DATA + "1"


def test_sign_test_accepts_greater_and_then_gives_no_two_sided_figure() -> None:
    result = sign_test(G_A, G_B, alternative="greater")
    assert result.p == pytest.approx(_tail(3, 5), rel=1e-12)
    assert result.alternative == "greater"
    assert result.statistic == 3
    assert result.note == G_NOTE


def test_sign_test_default_margin_is_the_step_of_both_sides_pooled() -> None:
    # a alone has step 1, b alone step 1; pooled 1 1.5 2 2.5 3 3.5 -> step 0.5.
    # median(a) = 2, median(b) = 2.5 -> "greater". 2.5 - a > 0.5: only 1.0 -> 1 of 3;
    # b - 2 > 0.5: only 3.5 -> 1 of 3. P(X >= 1) = 7/8; two-sided min(1, 7/4) = 1 (not 1.75).
    result = sign_test([1.0, 2.0, 3.0], [1.5, 2.5, 3.5])
    assert result.p == pytest.approx(_tail(1, 3), rel=1e-12)
    assert result.p == pytest.approx(7 / 8, rel=1e-12)
    assert result.alternative == "greater"
    assert result.method == "sign test, margin 0.5"
    assert result.statistic == 1
    assert result.note == (
        "1/3 of a below b's median and 1/3 of b above a's median by more than 0.5; "
        "P(X >= 1), X ~ Bin(3, 1/2)" + FROM_DATA + "1"
    )


def test_sign_test_equal_medians_read_as_b_faster() -> None:
    # Both medians are 2 -> direction "less" (b no slower). Step 1: a - 2 > 1: none -> 0 of 3;
    # 2 - b > 1: 0.0 -> 1 of 3. P(X >= 0) = 1 is the larger tail.
    result = sign_test([1.0, 2.0, 3.0], [0.0, 2.0, 5.0])
    assert result.alternative == "less"
    assert result.p == pytest.approx(1.0)
    assert result.note == (
        "0/3 of a above b's median and 1/3 of b below a's median by more than 1; "
        "P(X >= 0), X ~ Bin(3, 1/2)" + FROM_DATA + "1"
    )


# Values all within [-1, 1] -> tolerance 1e-9 * max(1, 0.5 + 1e-9) = 1e-9, so margin + tolerance is
# the float 0.5 + 1e-9 = EDGE: a difference of exactly EDGE is not "more than the margin".
EDGE = 0.5 + 1e-9


@pytest.mark.parametrize(
    ("a", "b", "direction", "word_a", "word_b"),
    [
        ([EDGE] * 3, [0.0] * 3, "less", "above", "below"),
        ([0.0] * 3, [EDGE] * 3, "greater", "below", "above"),
    ],
)
def test_sign_test_difference_of_exactly_margin_plus_tolerance_is_not_counted(
    a: list[float], b: list[float], direction: str, word_a: str, word_b: str
) -> None:
    # Every difference between a value and the other side's median is EDGE - 0 = EDGE: 0 of 3 each.
    result = sign_test(a, b, margin=0.5)
    assert result.alternative == direction
    assert result.p == pytest.approx(1.0)
    assert result.statistic == 0
    assert result.note == (
        f"0/3 of a {word_a} b's median and 0/3 of b {word_b} a's median by more than 0.5; "
        "P(X >= 0), X ~ Bin(3, 1/2)" + FROM_DATA + "1"
    )


@pytest.mark.parametrize(
    ("a", "b", "k_a", "k_b", "count", "n_used"),
    [
        # median(a) = 4, median(b) = 2, margin 0. a - 2 > 0: 3 4 5 -> 3 of 3 (P = 1/8);
        # 4 - b > 0: 0 1 2 3.5 -> 4 of 5 (P = 6/32): b's tail is larger -> P(X >= 4), Bin(5).
        ([3.0, 4.0, 5.0], [0.0, 1.0, 2.0, 3.5, 7.0], 3, 4, 4, 5),
        # median(a) = 4, median(b) = 2. a - 2 > 0: 3 4 5 6 -> 4 of 5 (P = 6/32);
        # 4 - b > 0: 0 2 3 -> 3 of 3 (P = 1/8): a's tail is larger -> P(X >= 4), Bin(5).
        ([1.0, 3.0, 4.0, 5.0, 6.0], [0.0, 2.0, 3.0], 4, 3, 4, 5),
        # median(a) = 1, median(b) = 0.5. a - 0.5 > 0: 1 of 1 (P = 1/2); 1 - b > 0: 0 0.5 -> 2 of 3
        # (P = 4/8 = 1/2). Equal tails: a's count is reported, with a's n: P(X >= 1), Bin(1).
        ([1.0], [0.0, 0.5, 2.0], 1, 2, 1, 1),
    ],
)
def test_sign_test_reports_the_larger_tail_with_its_own_count_and_size(
    a: list[float], b: list[float], k_a: int, k_b: int, count: int, n_used: int
) -> None:
    expected = max(_tail(k_a, len(a)), _tail(k_b, len(b)))
    result = sign_test(a, b, margin=0.0)
    assert result.alternative == "less"
    assert result.p == pytest.approx(expected, rel=1e-12)
    assert result.p == pytest.approx(_tail(count, n_used), rel=1e-12)
    assert result.statistic == count
    two_sided = min(1.0, 2.0 * expected)
    assert result.note == (
        f"{k_a}/{len(a)} of a above b's median and {k_b}/{len(b)} of b below a's median by more "
        f"than 0; P(X >= {count}), X ~ Bin({n_used}, 1/2)" + FROM_DATA + f"{two_sided:.4g}"
    )


@pytest.mark.parametrize(("a", "b"), [([1000.0] * 3, [1.0] * 3), ([1.0] * 3, [1000.0] * 3)])
def test_sign_test_tolerance_scales_with_the_larger_side(a: list[float], b: list[float]) -> None:
    # Largest value 1000 on either side -> tolerance 1e-9 * 1000 = 1e-6. Every difference is 999,
    # only 999 - 998.9999995 = 5e-7 beyond the margin: within the tolerance, so 0 of 3 each, p = 1
    # (a tolerance taken from the 1.0 side alone, 1e-9, would count all 3: P(X >= 3) = 1/8).
    result = sign_test(a, b, margin=998.9999995)
    assert result.p == pytest.approx(1.0)
    assert result.statistic == 0
    assert result.note.startswith("0/3 of a ")
    assert " and 0/3 of b " in result.note


# --- decision_p ----------------------------------------------------------------------------------


def test_decision_p_doubles_a_data_directed_sign_p_but_caps_it_at_one() -> None:
    result = model.TestResult("sign", 0.75, "less", "sign test, margin 0.1", 3, "")
    # 2 * 0.75 = 1.5 -> capped at 1.
    assert decision_p(result, "two-sided") == 1.0
    assert decision_p(result, "less") == 0.75

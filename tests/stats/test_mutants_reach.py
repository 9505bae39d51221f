"""Tests that kill mutants mutmut found surviving in bootscope/stats/reach.py (make mutation):
each asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

from math import comb

import pytest
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats.reach import boots_to_reach, cannot_tell_reason, smallest_p

# --- smallest_p -------------------------------------------------------------------------------


@pytest.mark.parametrize(("n_a", "n_b"), [(0, 3), (3, 0), (0, 0)])
@pytest.mark.parametrize("method", ["mw", "sign"])
def test_smallest_p_refuses_an_empty_side_even_when_the_other_has_values(
    n_a: int, n_b: int, method: str
) -> None:
    with pytest.raises(StatsError, match="a side of 0 values has no p-value"):
        smallest_p(n_a, n_b, method=method)


def test_smallest_p_of_seven_against_seven_is_two_over_c_14_7() -> None:
    # C(14, 7) = 3432 orderings; the most extreme one, both ways: 2 / 3432 = 5.83e-4.
    assert smallest_p(7, 7) == pytest.approx(2 / 3432)
    separated = sps.mannwhitneyu(list(range(10, 17)), list(range(7)), method="exact")
    assert smallest_p(7, 7) == pytest.approx(float(separated.pvalue))
    # One-sided: 1 / 3432.
    assert smallest_p(7, 7, "less") == pytest.approx(1 / 3432)


def test_smallest_p_of_a_few_thousand_orderings_is_not_zero() -> None:
    # 5 against 9: C(14, 5) = 2002 orderings; 2 / 2002 = 9.99e-4.
    assert smallest_p(5, 9) == pytest.approx(2 / 2002)
    # 8 against 8: C(16, 8) = 12870; 2 / 12870.
    assert smallest_p(8, 8) == pytest.approx(2 / 12870)


def test_smallest_p_is_exact_past_two_to_the_thousand_orderings() -> None:
    # C(1006, 503) lies between 2**1000 and 2**1001 (math.comb, exact integers): 2 / C is still a
    # normal double, about 1.16e-301 (it was cut to 0 at 2**1000 orderings).
    assert 2**1000 <= comb(1006, 503) < 2**1001
    assert smallest_p(503, 503) == pytest.approx(1.1596347273827704e-301, rel=1e-12)
    assert smallest_p(502, 502) == pytest.approx(2 / comb(1004, 502), rel=1e-12)
    # 1 against 2**1000 - 1: 2**1000 orderings, 2 / 2**1000 = 2**-999 exactly.
    assert smallest_p(1, 2**1000 - 1) == 2.0**-999
    # Past the smallest double (about 4.9e-324) it underflows to 0: C(4000, 2000) is about 10**1202.
    assert smallest_p(2000, 2000) == 0.0


def test_an_unknown_alternative_is_refused_not_read_as_one_sided() -> None:
    # "two_sided" once gave the one-sided floor 1 / C(6, 3) = 0.05 instead of 0.1.
    assert smallest_p(3, 3, "two-sided") == pytest.approx(0.1)
    assert smallest_p(3, 3, "less") == smallest_p(3, 3, "greater") == pytest.approx(0.05)
    with pytest.raises(StatsError, match="unknown alternative 'two_sided'"):
        smallest_p(3, 3, "two_sided")


def test_one_boot_a_side_is_enough_for_a_one_sided_alpha_above_one_half() -> None:
    # One-sided, 1 against 1: 1 / C(2, 1) = 0.5 < 0.6, so 1 boot a side (it answered 2).
    assert boots_to_reach(0.6, "less") == 1
    assert boots_to_reach(0.5, "less") == 2  # 0.5 is not below 0.5; 2 a side: 1 / 6


# --- boots_to_reach ---------------------------------------------------------------------------


def test_boots_to_reach_ten_percent_two_sided_is_four_not_three() -> None:
    # Two-sided: 3 a side: 2 / C(6, 3) = 2 / 20 = 0.1, not below 0.1; 4 a side: 2 / 70 = 0.029.
    # (One-sided, 3 a side would do: 1 / 20 = 0.05.)
    assert boots_to_reach(0.1) == 4
    assert boots_to_reach(0.1, "two-sided") == 4


def test_boots_to_reach_one_sided_ten_percent_is_three() -> None:
    # One-sided: 2 a side: 1 / C(4, 2) = 1/6 = 0.167; 3 a side: 1 / 20 = 0.05 < 0.1.
    assert boots_to_reach(0.1, "less") == 3


def test_boots_to_reach_half_is_two_a_side() -> None:
    # Two-sided: 2 a side: 2 / C(4, 2) = 2/6 = 0.333 < 0.5.
    assert boots_to_reach(0.5) == 2
    # Sign test, two-sided: 2 * 0.5**2 = 0.5, not below 0.5; 3 a side: 2 * 0.125 = 0.25.
    assert boots_to_reach(0.5, method="sign") == 3


def test_boots_to_reach_five_percent_with_the_sign_test_is_six() -> None:
    # Two-sided sign: 2 * 0.5**5 = 0.0625, 2 * 0.5**6 = 0.03125 < 0.05. (Mann-Whitney would say 4.)
    assert boots_to_reach(0.05, method="sign") == 6
    # One-sided sign: 0.5**4 = 0.0625, 0.5**5 = 0.03125 < 0.05.
    assert boots_to_reach(0.05, "less", method="sign") == 5


def test_boots_to_reach_can_answer_exactly_the_last_allowed_size() -> None:
    # Two-sided sign, n a side: 2 * 0.5**n = 2**(1 - n). Below 2**-998 needs 1 - n < -998: n = 1000.
    assert boots_to_reach(2.0**-998, method="sign") == 1000


def test_boots_to_reach_refuses_past_the_last_allowed_size() -> None:
    # Below 2**-999 needs n = 1001 > 1000 a side.
    with pytest.raises(StatsError, match="needs more than 1000 boots a side"):
        boots_to_reach(2.0**-999, method="sign")


@pytest.mark.parametrize("alpha", [0.0, 1.0, 1.5, -0.1])
def test_boots_to_reach_refuses_alpha_outside_zero_to_one(alpha: float) -> None:
    with pytest.raises(StatsError, match=r"alpha must lie between 0 and 1, not "):
        boots_to_reach(alpha)


# --- cannot_tell_reason -----------------------------------------------------------------------


def test_cannot_tell_when_the_smallest_p_equals_alpha() -> None:
    # 3 a side, two-sided: 2 / C(6, 3) = 0.1: p < 0.1 is out of reach; 4 a side: 2 / 70 = 0.029.
    assert cannot_tell_reason(3, 3, 0.1) == (
        "cannot tell: 3 and 3 boots cannot reach p < 0.1 (smallest possible p = 0.1); "
        "it takes at least 4 boots a side"
    )


def test_cannot_tell_reason_with_the_sign_test_names_its_own_boots_a_side() -> None:
    # Sign, two-sided, 3 a side: 2 * 0.5**3 = 0.25; below 0.05 needs 6 a side (2 / 64 = 0.031).
    assert cannot_tell_reason(3, 3, 0.05, method="sign") == (
        "cannot tell: 3 and 3 boots cannot reach p < 0.05 (smallest possible p = 0.25); "
        "it takes at least 6 boots a side"
    )


def test_cannot_tell_reason_one_sided_counts_one_sided_boots() -> None:
    # One-sided, 2 a side: 1 / C(4, 2) = 1/6 = 0.17; below 0.1 needs 3 a side (1 / 20 = 0.05).
    assert cannot_tell_reason(2, 2, 0.1, "less") == (
        "cannot tell: 2 and 2 boots cannot reach p < 0.1 (smallest possible p = 0.17); "
        "it takes at least 3 boots a side"
    )
    # 3 a side one-sided can: 0.05 < 0.1.
    assert cannot_tell_reason(3, 3, 0.1, "less") is None

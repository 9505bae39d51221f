"""Tests that kill mutants mutmut found surviving in bootscope/stats/bootstrap.py and in
bootscope/stats/rank.py (``hodges_lehmann``) (make mutation): each asserts a value computed by hand
or by scipy, not by the code under test.
"""

from __future__ import annotations

import math

import pytest
from bad_sides import BAD_SIDES, GOOD

from bootscope.errors import StatsError
from bootscope.stats.bootstrap import median_difference_ci
from bootscope.stats.rank import hodges_lehmann

# --- median_difference_ci: the side named in an input error ------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "message"),
    BAD_SIDES,
)
def test_bootstrap_bad_input_names_the_side_as_a_or_b(a: list[float], b: list[float], message: str) -> None:
    with pytest.raises(StatsError, match=message):
        median_difference_ci(a, b, 0.05, seed=1, resamples=100)


# --- median_difference_ci: the resample floor is 100, inclusive --------------------------------


def test_bootstrap_accepts_exactly_100_resamples() -> None:
    # One value per side: every resample is that value, so the interval is 4 - 1 = 3 at both ends.
    assert median_difference_ci([1.0], [4.0], 0.05, seed=7, resamples=100) == (3.0, 3.0)


def test_bootstrap_rejects_99_resamples_with_the_floor_in_the_message() -> None:
    with pytest.raises(StatsError, match="at least 100 resamples"):
        median_difference_ci(GOOD, GOOD, 0.05, seed=7, resamples=99)


# --- median_difference_ci: every element of each side can be drawn -------------------------------


def test_bootstrap_single_value_sides_give_the_plain_difference() -> None:
    # A side of one value can only resample that value (index 0), so the interval is the point
    # 2.5 - (-1.5) = 4.0; a resampler that skips index 0 cannot draw from a one-value side.
    assert median_difference_ci([-1.5], [2.5], 0.10, seed=3, resamples=200) == (4.0, 4.0)


def test_bootstrap_resamples_the_smallest_value_of_a() -> None:
    # b = [0]: the difference is -median(resample of a). a = [0, 10] resampled in pairs gives
    # medians 0 (p 1/4), 5 (p 1/2), 10 (p 1/4). With alpha = 0.2 the 0.1 and 0.9 quantiles fall in
    # the outer atoms: low = 0 - 10 = -10, high = 0 - 0 = 0. Never drawing a[0] = 0 would give -10
    # at both ends.
    assert median_difference_ci([0.0, 10.0], [0.0], 0.2, seed=11) == (-10.0, 0.0)


def test_bootstrap_resamples_b_per_row_and_draws_its_smallest_value() -> None:
    # a = [2]: the difference is median(resample of b) - 2. b = [0, 10] in pairs gives medians
    # 0, 5, 10 with p 1/4, 1/2, 1/4, so the 0.1 and 0.9 quantiles are 0 - 2 = -2 and 10 - 2 = 8.
    # One median over the whole (resamples x 2) table would be a single value near 5 (zero width);
    # never drawing b[0] would give 10 - 2 = 8 at both ends.
    assert median_difference_ci([2.0], [0.0, 10.0], 0.2, seed=11) == (-2.0, 8.0)


# --- median_difference_ci: the ends are the alpha/2 and 1 - alpha/2 quantiles --------------------


def test_bootstrap_ends_are_the_alpha_over_2_quantiles() -> None:
    # a = [0], b = [0, 10]: medians 0 (p 1/4), 5 (p 1/2), 10 (p 1/4). With alpha = 0.6 the ends
    # are the 0.3 and 0.7 quantiles, both inside the middle atom: (5, 5). Using alpha/3 on either
    # end (0.2 or 0.8) would reach an outer atom: 0 at the low end or 10 at the high end.
    assert median_difference_ci([0.0], [0.0, 10.0], 0.6, seed=5) == (5.0, 5.0)


def test_bootstrap_same_seed_gives_the_same_interval() -> None:
    a = [10.0, 12.0, 11.0, 15.0, 9.0]
    b = [8.0, 9.5, 7.0, 10.0, 8.5, 9.0]
    first = median_difference_ci(a, b, 0.05, seed=42, resamples=500)
    assert median_difference_ci(a, b, 0.05, seed=42, resamples=500) == first
    # The interval brackets the observed difference of medians, 8.75 - 11 = -2.25.
    assert first[0] <= -2.25 <= first[1]


# --- hodges_lehmann: the side named in an input error --------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([1.0, math.nan], GOOD, r"^side a holds a NaN"),
        ([], GOOD, r"^side a has 0 sample\(s\)"),
        (GOOD, [1.0, -math.inf], r"^side b holds a NaN"),
        (GOOD, [], r"^side b has 0 sample\(s\)"),
    ],
)
def test_hodges_lehmann_bad_input_names_the_side_as_a_or_b(
    a: list[float], b: list[float], message: str
) -> None:
    with pytest.raises(StatsError, match=message):
        hodges_lehmann(a, b, 0.05)

"""Tests that kill mutants mutmut found surviving in bootscope/stats/sequential.py
(make mutation): each asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

import math

import pytest

from bootscope.errors import StatsError
from bootscope.stats.sequential import precise_enough

# Five values a side, no ties in the pooled ten: the exact Mann-Whitney interval. Of the
# C(10, 5) = 252 equally likely arrangements, U = 0, 1, 2, 3 have 1, 1, 2, 3 each, so
# P(U <= 0) = 1/252, P(U <= 1) = 2/252, P(U <= 2) = 4/252 = 0.0159 <= 0.025 and
# P(U <= 3) = 7/252 = 0.0278 > 0.025: k = 3, the 95 % interval is [D_(3), D_(25 - 3 + 1)] = [D_(3), D_(23)].


def test_zero_precision_raises() -> None:
    with pytest.raises(StatsError, match="precision must be a positive fraction"):
        precise_enough([1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 2.0, 3.0, 4.0, 5.0], 0.0, 0.05)


def test_nan_in_a_names_side_a() -> None:
    with pytest.raises(StatsError, match="side a holds a NaN"):
        precise_enough([1.0, math.nan, 3.0, 4.0, 5.0], [1.0, 2.0, 3.0, 4.0, 5.0], 0.01, 0.05)


def test_nan_in_b_names_side_b() -> None:
    with pytest.raises(StatsError, match="side b holds a NaN"):
        precise_enough([1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 2.0, math.nan, 4.0, 5.0], 0.01, 0.05)


def test_exactly_min_n_a_side_is_enough() -> None:
    a = [10.0, 10.1, 10.2, 10.3, 10.4]
    b = [10.05, 10.15, 10.25, 10.35, 10.45]
    # b_j - a_i = 0.05 + 0.1 (j - i), j - i = -4..4 with counts 1 2 3 4 5 4 3 2 1 (cumulative
    # 1 3 6 10 15 19 22 24 25): D_(3) = 0.05 - 0.3 = -0.25, D_(23) = 0.05 + 0.3 = 0.35.
    # Half-width 0.3; median(a) = 10.2; 0.3 / 10.2 = 0.0294 <= 0.05.
    assert precise_enough(a, b, 0.05, 0.05)
    assert precise_enough(a, b, 0.05, 0.05, min_n=5)
    assert not precise_enough(a, b, 0.05, 0.05, min_n=6)


def test_half_width_equal_to_the_target_is_precise_enough() -> None:
    a = [20.0, 22.0, 24.0, 26.0, 28.0]
    b = [21.0, 23.0, 25.0, 27.0, 29.0]
    # b_j - a_i = 1 + 2 (j - i): D_(3) = 1 - 6 = -5, D_(23) = 1 + 6 = 7; half-width (7 + 5) / 2 = 6.
    # median(a) = 24 and 0.25 * 24 = 6 exactly (binary fractions): 6 <= 6.
    assert precise_enough(a, b, 0.25, 0.05)
    # Just below: 0.24 * 24 = 5.76 < 6.
    assert not precise_enough(a, b, 0.24, 0.05)

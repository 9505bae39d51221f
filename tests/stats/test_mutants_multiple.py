"""Tests that kill mutants mutmut found surviving in bootscope/stats/multiple.py (make mutation):
each asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

import pytest
from scipy import stats as sps

from bootscope.stats.multiple import benjamini_hochberg

# The two survivors (the running minimum starting at 2.0 instead of 1.0; the final cap min(2.0, .)
# instead of min(1.0, .)) are equivalent: either line alone keeps every q-value at or below 1, so no
# input tells either mutant from the original. These tests pin the values those two lines guard.


def test_bh_q_values_of_a_hand_worked_family_match_scipy() -> None:
    # m = 4, sorted p: 0.01 (rank 1), 0.03 (2), 0.04 (3), 0.9 (4).
    # rank 4: 4 * 0.9 / 4 = 0.9; rank 3: 4 * 0.04 / 3 = 0.0533; rank 2: min(0.0533, 4 * 0.03 / 2 = 0.06)
    # = 0.0533; rank 1: min(0.0533, 4 * 0.01 / 1 = 0.04) = 0.04.
    p = [0.04, 0.01, 0.03, 0.9]
    expected = [0.16 / 3, 0.04, 0.16 / 3, 0.9]
    assert benjamini_hochberg(p) == pytest.approx(expected, rel=1e-12)
    by_scipy = list(sps.false_discovery_control(p, method="bh"))
    assert benjamini_hochberg(p) == pytest.approx(by_scipy, rel=1e-12)


def test_bh_q_value_never_exceeds_one_even_for_an_out_of_range_p() -> None:
    # m = 2 (None does not count): rank 2: 2 * 1.5 / 2 = 1.5 -> capped at 1; rank 1: 2 * 0.2 / 1 = 0.4.
    assert benjamini_hochberg([1.5, None, 0.2]) == [1.0, None, pytest.approx(0.4, rel=1e-12)]

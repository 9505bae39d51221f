"""Tests that kill mutants mutmut found surviving in bootscope/stats/_checks.py
(make mutation): each asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

import numpy as np
import pytest

from bootscope.stats._checks import value_tolerance
from bootscope.stats.sign import sign_test


def test_tolerance_without_values_uses_scale_one() -> None:
    # No non-empty array: scale defaults to 1, tolerance = 1e-9 * max(1, 1) = 1e-9.
    assert value_tolerance() == 1e-9
    assert value_tolerance(np.array([], dtype=np.float64)) == 1e-9


def test_tolerance_for_small_values_is_one_billionth() -> None:
    # Largest |value| 0.5 < 1: tolerance = 1e-9 * max(1, 0.5) = 1e-9.
    assert value_tolerance(np.array([0.5, -0.25])) == 1e-9
    # Largest |value| 1.5 < 2: still 1e-9 * 1.5 = 1.5e-9.
    assert value_tolerance(np.array([1.5]), np.array([-0.5])) == pytest.approx(1.5e-9)


def test_sign_test_counts_a_value_just_beyond_margin_plus_tolerance() -> None:
    # a lies 0.1 + 1.5e-9 above b's median (0); the tolerance is 1e-9 * max(1, 0.1000000015) = 1e-9,
    # so 0.1000000015 > 0.1 + 1e-9: all 5 of a count, and all 5 of b lie as far below a's median.
    a = [0.1 + 1.5e-9] * 5
    b = [0.0] * 5
    result = sign_test(a, b, margin=0.1, alternative="less")
    # P(X >= 5), X ~ Bin(5, 1/2) = 1/32.
    assert result.statistic == 5
    assert result.p == pytest.approx(1 / 32)

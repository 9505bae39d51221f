"""Tests that kill mutants mutmut found surviving in bootscope/stats/rank.py
(make mutation): each asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

import math
from statistics import NormalDist

from bootscope.stats.rank import hodges_lehmann


def test_normal_interval_with_ties_uses_the_tie_corrected_variance() -> None:
    # 52 values with ties: beyond the exact sizes, so the tie-corrected normal approximation.
    a = [0.0] * 5 + [1.0] * 19
    b = [0.0] * 13 + [1.0] * 15
    # Pooled: 18 zeros, 34 ones; N = 52. Tie term sum(t^3 - t) = (5832 - 18) + (39304 - 34) = 45084;
    # over N (N - 1) = 2652 that is exactly 17. Var U = n m / 12 (N + 1 - 17) = 24 * 28 / 12 * 36 = 2016.
    variance = 24 * 28 / 12 * (53 - 45084 / (52 * 51))
    assert variance == 2016.0
    # k = floor(n m / 2 - z sd) = floor(336 - 1.959964 * 44.8999) = floor(247.998) = 247.
    k = math.floor(336 - NormalDist().inv_cdf(0.975) * math.sqrt(variance))
    assert k == 247
    # Differences b - a: -1 for 13 * 19 = 247 pairs, 0 for 13 * 5 + 15 * 19 = 350, 1 for 15 * 5 = 75.
    # D_(247) = -1 (the last -1); D_(672 - 247 + 1) = D_(426) = 0 (0 spans D_(248)..D_(597)).
    shift = hodges_lehmann(a, b, 0.05)
    assert shift.method == "normal approximation"
    assert shift.ci == (-1.0, 0.0)

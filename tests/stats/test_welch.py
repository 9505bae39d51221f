"""Welch's interval (each side its own spread) against scipy's own, and why the tune's verdicts need
it: a rank interval of 2 boots against 8, one side 25 times wider, misses a zero difference often;
a verdict that Welch's interval must agree with stays near its 5 %."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from bootscope.stats.compare import Options, compare
from bootscope.stats.welch import welch_interval
from bootscope.usecases.tune.decide import NO_SAVING, judge

A = [10.02, 9.98, 10.05, 10.01, 9.97, 10.03, 10.00, 9.99]
B = [9.62, 9.81]


def test_the_interval_is_scipys_welch_interval() -> None:
    # the last pair: both sides spread exactly alike (their variances of the mean equal, not zero)
    for a, b, alpha in ((A, B, 0.05), (B, A, 0.05), (A[:3], A[3:], 0.1), ([1.0, 2.0], [3.0, 4.0], 0.05)):
        expected = sps.ttest_ind(b, a, equal_var=False).confidence_interval(1 - alpha)
        found = welch_interval(a, b, alpha)
        assert found == pytest.approx((expected.low, expected.high), rel=1e-9)


def test_a_side_of_one_value_or_no_spread_gives_no_interval() -> None:
    assert welch_interval([1.0], [2.0, 3.0], 0.05) is None
    assert welch_interval([1.0, 2.0], [2.0], 0.05) is None
    assert welch_interval([1.0, 1.0], [2.0, 2.0], 0.05) is None
    # One side without spread: the other's spread alone, with its own degrees of freedom (n - 1).
    found = welch_interval([1.0, 1.0, 1.0], [2.0, 3.0], 0.05)
    half = sps.t.ppf(0.975, 1) * np.std([2.0, 3.0], ddof=1) / np.sqrt(2)
    assert found == pytest.approx((1.5 - half, 1.5 + half))


def test_unlike_spreads_settle_no_verdict_that_welch_does_not_share() -> None:
    # The rank interval of 2 boots against 8 spans the 16 differences' extremes: above zero here.
    ranked = compare(A, B, "kernel_init_s", "s", Options(alpha=0.05, power=False, bootstrap_resamples=0))
    assert ranked.shift_ci is not None and ranked.shift_ci[1] < 0
    # Welch's interval of 2 boots (1 degree of freedom) holds zero: no saving, saying why.
    verdict = judge(A, B, "kernel_init_s", "s", 0.05)
    assert verdict.decision == NO_SAVING and "spread unlike" in verdict.why
    assert verdict.welch_ci is not None and verdict.welch_ci[0] < 0 < verdict.welch_ci[1]
    assert verdict.top() == pytest.approx(verdict.welch_ci[1])


def test_verdicts_keep_their_error_rate_when_one_arm_spreads_wider() -> None:
    rng = np.random.default_rng(7)
    trials, rank_only, verdicts = 200, 0, 0
    opts = Options(alpha=0.05, power=False, bootstrap_resamples=0)
    for _ in range(trials):
        base, tuned = list(rng.normal(10.0, 0.01, 8)), list(rng.normal(10.0, 0.25, 2))
        ci = compare(base, tuned, "kernel_init_s", "s", opts).shift_ci
        assert ci is not None
        rank_only += not ci[0] <= 0 <= ci[1]
        verdicts += judge(base, tuned, "kernel_init_s", "s", 0.05).decision != NO_SAVING
    # No true difference: the rank interval alone is wrong about half the time (two boots on one
    # side of the baseline), the verdicts about as often as 5 % allows.
    assert rank_only / trials > 0.3
    assert verdicts / trials <= 0.1

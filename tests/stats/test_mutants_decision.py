"""Tests that kill mutants mutmut found surviving in bootscope/stats/decision.py
(make mutation): each asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats.decision import BAD, GOOD, UNKNOWN, decide

BASE4 = [10.0, 11.0, 12.0, 13.0]
CAND4 = [20.0, 21.0, 22.0, 23.0]


def test_default_is_one_look_so_alpha_is_not_split() -> None:
    # margin = 0.1 * median(10, 11, 12, 13) = 0.1 * 11.5 = 1.15; moved candidate 18.85..21.85 lies
    # above every baseline value: exact one-sided p = 1 / C(8, 4) = 1/70 = 0.0143.
    decision = decide(BASE4, CAND4, threshold=0.1, alpha=0.02)
    # One look: alpha_look = 0.02 / 1 = 0.02 and 0.0143 < 0.02 is "bad" (two looks: 0.01, unknown).
    assert decision.alpha_look == pytest.approx(0.02)
    assert decision.p_bad == pytest.approx(1 / 70)
    assert decision.verdict == BAD


def test_too_few_samples_message_is_exact() -> None:
    expected = "a bisect decision needs at least 2 boots of the baseline and of the candidate"
    with pytest.raises(StatsError) as raised:
        decide([1.0], [1.0, 2.0], 0.05, 0.05)
    assert str(raised.value) == expected


def test_float32_baseline_median_is_taken_in_float64() -> None:
    one = np.float32(1.0)
    up = np.nextafter(one, np.float32(2.0))  # 1 + 2**-23, the next float32 above 1
    baseline = np.array([one, up], dtype=np.float32)
    decision = decide(baseline, [1.0, 2.0], threshold=1.0, alpha=0.05)
    # median = (1 + (1 + 2**-23)) / 2 = 1 + 2**-24, exact in float64; float32 would round it to 1.0.
    assert decision.margin == 1.0 + 2.0**-24


def test_float32_candidate_is_moved_by_the_margin_in_float64() -> None:
    baseline = [0.25, 0.5, 0.75, 1.0]
    candidate = np.array([2.0, 2.5, 3.0, 3.5], dtype=np.float32)
    margin = 1.0 - 2.0**-30
    decision = decide(baseline, candidate, threshold=0.0, alpha=0.02, min_margin=margin)
    # moved = candidate - margin = 1 + 2**-30, 1.5 + 2**-30, ... (exact in float64): every moved value
    # lies above 1.0, the largest baseline value, so p_bad = 1 / C(8, 4) = 1/70 = 0.0143 < 0.02.
    # (Moved in float32, 1 + 2**-30 rounds to 1.0, a tie: p = 2/70 = 0.0286, not bad.)
    expected = sps.mannwhitneyu(
        np.asarray(candidate, dtype=np.float64) - margin, baseline, alternative="greater"
    ).pvalue
    assert expected == pytest.approx(1 / 70)
    assert decision.p_bad == pytest.approx(1 / 70)
    assert decision.verdict == BAD


def test_p_bad_equal_to_alpha_look_is_not_bad() -> None:
    # moved = CAND4 - 1.15 lies above all of BASE4: exact p_bad = 1/70 (scipy, no ties).
    p_bad = sps.mannwhitneyu(np.array(CAND4) - 1.15, BASE4, alternative="greater").pvalue
    assert p_bad == pytest.approx(1 / 70)
    # The test is strict (p < alpha_look): a p equal to alpha is not significant; p_good = 1.
    decision = decide(BASE4, CAND4, threshold=0.1, alpha=float(p_bad))
    assert decision.verdict == UNKNOWN


def test_p_good_equal_to_alpha_look_is_not_good() -> None:
    base = [10.0, 11.0, 12.0, 13.0, 14.0]
    cand = [1.0, 2.0, 3.0, 4.0, 5.0]
    # margin = 0.05 * 12 = 0.6; moved 0.4..4.4 lies below all of base: p_good = 1 / C(10, 5) = 1/252.
    p_good = sps.mannwhitneyu(np.array(cand) - 0.6, base, alternative="less").pvalue
    assert p_good == pytest.approx(1 / 252)
    decision = decide(base, cand, threshold=0.05, alpha=float(p_good))
    assert decision.verdict == UNKNOWN
    # Just above that p, the same samples are good.
    assert decide(base, cand, threshold=0.05, alpha=0.005).verdict == GOOD

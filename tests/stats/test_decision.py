"""The three-way regression decision of `bisect-run` and `check` (bootscope/stats/decision.py): its
p-values against scipy on the moved sample, its margin and interval by hand, and its A/A error rate."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats.decision import BAD, GOOD, UNKNOWN, decide, p_faster


def test_decision_p_values_match_scipy_on_the_moved_sample() -> None:
    rng = np.random.default_rng(4)
    base = 2.5 + rng.normal(0, 0.05, 8)
    cand = 3.0 + rng.normal(0, 0.05, 8)
    decision = decide(base, cand, threshold=0.05, alpha=0.05, looks=2)
    margin = 0.05 * np.median(base)
    assert decision.margin == pytest.approx(margin)
    expected_bad = sps.mannwhitneyu(cand - margin, base, alternative="greater").pvalue
    expected_good = sps.mannwhitneyu(cand - margin, base, alternative="less").pvalue
    assert decision.p_bad == pytest.approx(expected_bad)
    assert decision.p_good == pytest.approx(expected_good)
    assert decision.alpha_look == pytest.approx(0.025)
    assert (decision.n_baseline, decision.n_candidate) == (8, 8)
    assert decision.verdict == BAD


def test_good_bad_unknown() -> None:
    rng = np.random.default_rng(5)
    base = 2.5 + rng.normal(0, 0.05, 8)
    # Same distribution, 20 % threshold: clearly not slower by 20 %.
    same = 2.5 + rng.normal(0, 0.05, 8)
    assert decide(base, same, 0.2, 0.05).verdict == GOOD
    # Slower by about the threshold itself: neither question can be answered.
    near = 2.5 * 1.2 + rng.normal(0, 0.05, 8)
    assert decide(base, near, 0.2, 0.05).verdict == UNKNOWN
    # A real 30 % slowdown against a 5 % threshold, but with two samples the test cannot reach alpha.
    assert decide(base[:2], (base * 1.3)[:2], 0.05, 0.05).verdict == UNKNOWN


def test_margin_shift_and_interval_by_hand() -> None:
    base = [10.0, 11.0, 12.0, 13.0]
    cand = [20.0, 21.0, 22.0, 23.0]
    decision = decide(base, cand, threshold=0.1, alpha=0.05, looks=4)
    # margin = 10 % of median(base) = 0.1 * 11.5 = 1.15; alpha split over 4 looks: 0.0125.
    assert decision.margin == pytest.approx(1.15)
    assert decision.alpha_look == pytest.approx(0.0125)
    # Differences cand - base: 7..13, 16 pairs; their median (Hodges-Lehmann) is 10.
    assert decision.shift == pytest.approx(10.0)
    # 4 a side: every moved candidate (18.85..21.85) lies above every baseline value, so the exact
    # one-sided p is 1 / C(8, 4) = 1/70 = 0.0143 > 0.0125: not bad at this look's alpha ...
    assert decision.p_bad == pytest.approx(1 / 70)
    assert decision.verdict == UNKNOWN
    # ... and bad with one look (0.0143 < 0.05); "good" asks the opposite tail: P(U <= 16) = 1.
    one_look = decide(base, cand, threshold=0.1, alpha=0.05)
    assert one_look.verdict == BAD and one_look.p_good == pytest.approx(1.0)
    # The 95 % interval (exact, 4 x 4: ranks 1 and 16 of the 16 differences) is [7, 13].
    assert one_look.shift_ci == (7.0, 13.0)


def test_margin_reads_the_size_of_a_negative_median_and_has_a_floor() -> None:
    # A metric whose values are negative (a shift of -2 s): the margin is 10 % of |median| = 0.2.
    negative = decide([-2.0, -2.0, -2.0], [-2.0, -2.0, -2.0], threshold=0.1, alpha=0.05)
    assert negative.margin == pytest.approx(0.2)
    # The floor wins over a smaller fraction: 1 % of 1 s is 0.01 s, the floor 0.05 s.
    floored = decide([1.0, 1.0], [1.0, 1.0], threshold=0.01, alpha=0.05, min_margin=0.05)
    assert floored.margin == pytest.approx(0.05)
    unfloored = decide([1.0, 1.0], [1.0, 1.0], threshold=0.01, alpha=0.05, min_margin=0.001)
    assert unfloored.margin == pytest.approx(0.01)


def test_far_faster_candidate_is_good() -> None:
    base = [10.0, 11.0, 12.0, 13.0, 14.0]
    cand = [1.0, 2.0, 3.0, 4.0, 5.0]
    decision = decide(base, cand, threshold=0.05, alpha=0.05)
    # Every moved candidate lies below every baseline value: P(good tail) = 1 / C(10, 5) = 1/252.
    assert decision.p_good == pytest.approx(1 / 252)
    assert decision.p_bad == pytest.approx(1.0)
    assert decision.verdict == GOOD


def test_false_bad_rate_when_nothing_changed() -> None:
    rng = np.random.default_rng(9)
    bad = 0
    for _ in range(400):
        base = rng.lognormal(0.9, 0.05, 6)
        cand = rng.lognormal(0.9, 0.05, 6)
        bad += decide(base, cand, 0.0, 0.05).verdict == BAD
    # With threshold 0 the "bad" call is a one-sided MW test at alpha 0.05: about 20 of 400.
    # Both bounds: a test that never calls "bad" would pass an upper bound alone.
    assert 0.02 <= bad / 400 <= 0.08


def test_too_few_samples_raise() -> None:
    with pytest.raises(StatsError, match="at least 2 boots"):
        decide([1.0], [1.0, 2.0], 0.05, 0.05)
    with pytest.raises(StatsError, match="at least 2 boots"):
        decide([1.0, 2.0], [1.0], 0.05, 0.05)


def test_p_faster_is_the_bad_question_mirrored() -> None:
    rng = np.random.default_rng(6)
    base = 2.5 + rng.normal(0, 0.05, 8)
    cand = 2.2 + rng.normal(0, 0.05, 8)
    margin = 0.1
    # Faster by more than the margin: (cand + margin) below the reference, by scipy on the moved sample.
    expected = sps.mannwhitneyu(cand + margin, base, alternative="less").pvalue
    assert p_faster(base, cand, margin) == pytest.approx(expected)
    # The same as decide()'s bad question with the sides swapped (the candidate as the baseline).
    assert p_faster(base, cand, margin) == pytest.approx(
        decide(cand, base, 0.0, 0.05, min_margin=margin).p_bad
    )
    # 0.3 s faster is more than 0.1 faster, not more than 0.5 faster.
    beyond, within = p_faster(base, cand, margin), p_faster(base, cand, 0.5)
    assert beyond is not None and within is not None and beyond < 0.01 < 0.99 < within
    assert p_faster([1.0, 1.0], [1.0, 1.0], 0.0) is None

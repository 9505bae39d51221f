"""Tests that kill mutants mutmut found surviving in bootscope/stats/rank.py
(make mutation): each asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations
from statistics import NormalDist

import numpy as np
import pytest
from bad_sides import BAD_SIDES
from scipy import stats as sps

from bootscope import model
from bootscope.errors import StatsError
from bootscope.stats.rank import hodges_lehmann, mann_whitney


def _sorted_differences(a: list[float], b: list[float]) -> list[float]:
    # The n*m differences b_j - a_i, sorted with numpy (D_(k) is item k - 1).
    return [float(d) for d in np.sort(np.subtract.outer(np.asarray(b), np.asarray(a)).ravel())]


# --- mann_whitney: the side named in an input error ------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "message"),
    BAD_SIDES,
)
def test_mann_whitney_bad_input_names_the_side_as_a_or_b(
    a: list[float], b: list[float], message: str
) -> None:
    with pytest.raises(StatsError, match=message):
        mann_whitney(a, b)


# --- mann_whitney: the result record on each path --------------------------------------------


def test_mann_whitney_all_identical_values_give_no_p_and_say_why() -> None:
    # Five 3.0s pooled: there is no ordering to test. They are ties, so the method is not "exact".
    result = mann_whitney([3.0, 3.0], [3.0, 3.0, 3.0], "less")
    assert result == model.TestResult(
        "mann_whitney", None, "less", "asymptotic", None, "all values identical"
    )


def test_mann_whitney_exact_untied_result_matches_scipy_and_keeps_the_alternative() -> None:
    a = [1.1, 2.3, 0.7, 3.1]
    b = [2.0, 4.5, 5.2, 3.8, 6.0]
    expected = sps.mannwhitneyu(b, a, alternative="greater", method="exact")
    result = mann_whitney(a, b, "greater")
    assert result.name == "mann_whitney"
    assert result.alternative == "greater"
    assert result.method == "exact"
    assert result.statistic == float(expected.statistic)
    assert result.p == pytest.approx(float(expected.pvalue), rel=1e-12)


def test_mann_whitney_exact_tied_result_keeps_the_alternative_and_enumerated_p() -> None:
    a = [1.0, 2.0, 2.0, 3.0]
    b = [2.0, 3.0, 3.0, 4.0]
    pooled = a + b

    def u_of(chosen: tuple[int, ...]) -> Fraction:
        # U of the values at ``chosen`` against the rest: 1 per pair above, 1/2 per tie.
        first = [pooled[i] for i in chosen]
        rest = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        return sum(
            (
                Fraction(1) if x > y else Fraction(1, 2) if x == y else Fraction(0)
                for x in first
                for y in rest
            ),
            Fraction(0),
        )

    observed = u_of((4, 5, 6, 7))
    # U of b: 2 beats 1 and ties two 2s (1 + 1) -> 2; each 3 beats 1, 2, 2 and ties 3 -> 3.5 twice;
    # 4 beats all four -> 4. Total 2 + 3.5 + 3.5 + 4 = 13.
    assert observed == 13
    # Exact conditional null: all C(8, 4) = 70 equally likely splits of the pooled (tied) values.
    splits = list(combinations(range(8), 4))
    p_greater = Fraction(sum(1 for s in splits if u_of(s) >= observed), len(splits))
    result = mann_whitney(a, b, "greater")
    assert result.name == "mann_whitney"
    assert result.alternative == "greater"
    assert result.method == "exact given the ties"
    assert result.statistic == 13.0
    assert result.p == pytest.approx(float(p_greater), rel=1e-12)


# --- hodges_lehmann: exact ranks from the Mann-Whitney null distribution ----------------------


def test_hodges_lehmann_exact_k_counts_a_tail_equal_to_alpha_over_2() -> None:
    # n = m = 4: U-null counts for u = 0..4 are 1, 1, 2, 3, 5 (partitions in a 4x4 box) over
    # C(8, 4) = 70, so P(U <= 3) = 7/70 = 0.1 = alpha/2 exactly for alpha = 0.2. The largest k with
    # P(U <= k - 1) <= 0.1 is k = 4 (P(U <= 4) = 12/70 > 0.1): interval [D_(4), D_(16 - 4 + 1)].
    a = [0.0, 10.0, 20.0, 30.0]
    b = [1.0, 12.0, 23.0, 34.0]
    d = _sorted_differences(a, b)
    shift = hodges_lehmann(a, b, 0.2)
    assert shift.method == "exact"
    assert shift.ci == (d[3], d[12])
    assert shift.coverage == pytest.approx(1.0 - 2.0 * 7 / 70)
    assert shift.estimate == float(np.median(d))


def test_hodges_lehmann_exact_k_of_one_gives_the_full_range() -> None:
    # n = 3, m = 4: C(7, 3) = 35; P(U <= 0) = 1/35 <= 0.05 but P(U <= 1) = 2/35 > 0.05, so k = 1:
    # the interval is [D_(1), D_(12)] (smallest and largest difference), coverage 1 - 2/35 = 33/35.
    a = [0.5, 2.0, 4.0]
    b = [1.0, 3.5, 6.0, 7.5]
    d = _sorted_differences(a, b)
    shift = hodges_lehmann(a, b, 0.1)
    assert shift.method == "exact"
    assert shift.ci == (d[0], d[11])
    assert shift.ci == (1.0 - 4.0, 7.5 - 0.5)
    assert shift.coverage == pytest.approx(33 / 35)


def test_hodges_lehmann_exact_too_few_samples_names_the_reason() -> None:
    # n = m = 2: the smallest tail is P(U <= 0) = 1/6 > 0.025, so no 95% interval exists.
    # Differences b - a: 3-1, 3-2, 4-1, 4-2 = 2, 1, 3, 2 -> median 2.
    shift = hodges_lehmann([1.0, 2.0], [3.0, 4.0], 0.05)
    assert shift.ci is None
    assert shift.coverage is None
    assert shift.method == "exact (too few samples for this alpha)"
    assert shift.estimate == 2.0


def test_hodges_lehmann_tied_too_few_samples_names_the_reason() -> None:
    # Ties (3.0 twice), 4 values: the split b = {1, 2} has U of b = 0 with probability 1/6 > 0.025
    # (one of C(4, 2) = 6 equally likely splits), so no 95% interval exists.
    # Differences b - a: 3-1, 3-2, 3-1, 3-2 = 2, 1, 2, 1 -> median 1.5.
    shift = hodges_lehmann([1.0, 2.0], [3.0, 3.0], 0.05)
    assert shift.ci is None
    assert shift.coverage is None
    assert shift.method == "exact given the ties (too few samples for this alpha)"
    assert shift.estimate == 1.5


# --- hodges_lehmann: normal approximation ----------------------------------------------------


def test_hodges_lehmann_normal_with_zero_spread_names_the_reason() -> None:
    # 60 identical values: beyond the exact sizes, and the tie-corrected variance is 0:
    # 30 * 30 / 12 * (61 - (60^3 - 60) / (60 * 59)) = 75 * (61 - 61) = 0.
    shift = hodges_lehmann([5.0] * 30, [5.0] * 30, 0.05)
    assert shift.ci is None
    assert shift.coverage is None
    assert shift.method == "normal approximation (zero spread)"
    assert shift.estimate == 0.0


def test_hodges_lehmann_normal_k_of_one_gives_the_full_range_and_its_coverage() -> None:
    # n = 51 distinct values, m = 1: not exact (51 > 50), no ties. Var U = 51 * 1 * 53 / 12 = 225.25.
    # alpha = 0.11: z = 1.598193; k = floor(51/2 - 1.598193 * 15.00833) = floor(1.5138) = 1,
    # so the interval is [D_(1), D_(51)] = [10 - 50, 10 - 0] and the coverage is 1 - alpha = 0.89.
    a = [float(i) for i in range(51)]
    b = [10.0]
    z = NormalDist().inv_cdf(1.0 - 0.11 / 2)
    assert math.floor(51 / 2 - z * math.sqrt(51 * 53 / 12)) == 1
    shift = hodges_lehmann(a, b, 0.11)
    assert shift.method == "normal approximation"
    assert shift.ci == (-40.0, 10.0)
    assert shift.coverage == pytest.approx(0.89)
    # Median of 10 - a over a = 0..50 is 10 - 25 = -15.
    assert shift.estimate == -15.0

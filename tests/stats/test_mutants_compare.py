"""Tests that kill mutants mutmut found surviving in bootscope/stats/compare.py
(make mutation): each asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

import math
from math import comb

import numpy as np
import pytest
from scipy import stats as sps

from bootscope import model
from bootscope.stats.compare import (
    CANNOT_TELL,
    DEGENERATE,
    FASTER,
    SAME,
    SLOWER,
    Options,
    _test_direction,
    compare,
    compare_many,
    interval_side,
    welch,
)

NO_EXTRAS = Options(power=False, bootstrap_resamples=0)


def _with_u(n: int, counts: list[int]) -> tuple[list[float], list[float]]:
    # a = 0, 1, ..., n - 1; b_j = c_j - 0.5 + (j + 1) / 1000 lies between the a-values c_j - 1 and
    # c_j, so exactly c_j values of a lie below it: U of b = sum(c_j), with no ties anywhere.
    a = [float(i) for i in range(n)]
    b = [c - 0.5 + (j + 1) / 1000 for j, c in enumerate(counts)]
    return a, b


# --- welch ------------------------------------------------------------------------------------------


def test_welch_is_the_unequal_variance_t_test_with_its_alternative() -> None:
    a = np.array([10.0, 12.0, 14.0, 16.0, 18.0, 20.0])
    b = np.array([9.0, 9.5, 10.0, 10.5])
    # a: mean 15, squared deviations 25 + 9 + 1 + 1 + 9 + 25 = 70, var 70 / 5 = 14, var/n = 7/3.
    # b: mean 9.75, squared deviations 2 * 0.5625 + 2 * 0.0625 = 1.25, var 1.25 / 3, var/n = 1.25 / 12.
    va, vb = 14.0 / 6, 1.25 / 12
    t = (9.75 - 15.0) / math.sqrt(va + vb)  # = -5.25 / sqrt(2.4375) = -3.3627
    df = (va + vb) ** 2 / (va**2 / 5 + vb**2 / 3)  # Welch-Satterthwaite: 5.438
    assert t == pytest.approx(-3.3627, abs=1e-4)
    assert df == pytest.approx(5.4383, abs=1e-4)
    p_less = float(sps.t.cdf(t, df))
    scipy_welch = sps.ttest_ind(b, a, equal_var=False, alternative="less")
    assert p_less == pytest.approx(float(scipy_welch.pvalue), rel=1e-9)
    # Student's pooled test differs here: pooled var (70 + 1.25) / 8, t = -2.725 on 8 df.
    assert float(sps.ttest_ind(b, a, alternative="less").pvalue) != pytest.approx(p_less, rel=1e-3)
    result = welch(a, b, "less")
    assert result.name == "welch"
    assert result.alternative == "less"
    assert result.method == "welch t"
    assert result.p == pytest.approx(p_less, rel=1e-9)
    assert result.statistic == pytest.approx(t, rel=1e-9)
    assert result.note == ""
    # Two-sided doubles the one tail.
    assert welch(a, b, "two-sided").p == pytest.approx(2 * p_less, rel=1e-9)


def test_welch_on_zero_spread_both_sides_says_so() -> None:
    result = welch(np.array([1.0, 1.0, 1.0]), np.array([2.0, 2.0]), "greater")
    assert result == model.TestResult("welch", None, "greater", "welch t", None, "zero spread on both sides")


@pytest.mark.filterwarnings("ignore:Precision loss")
def test_welch_tests_when_only_a_has_zero_spread() -> None:
    # a = 5, 5, 5 (no spread); b = 0, 2 (population std 1, sample var 2, var/n = 1).
    # t = (1 - 5) / sqrt(0 + 1) = -4; df = 1^2 / (1^2 / 1) = 1 (only b's term).
    result = welch(np.array([5.0, 5.0, 5.0]), np.array([0.0, 2.0]), "two-sided")
    assert result.statistic == pytest.approx(-4.0)
    assert result.p == pytest.approx(2 * float(sps.t.cdf(-4.0, 1)))
    assert result.note == ""


@pytest.mark.filterwarnings("ignore:Precision loss")
def test_welch_tests_when_only_b_has_zero_spread() -> None:
    # a = 0, 2 (population std 1, sample var 2, var/n = 1); b = 5, 5, 5 (no spread).
    # t = (5 - 1) / sqrt(1 + 0) = 4; df = 1 (only a's term).
    result = welch(np.array([0.0, 2.0]), np.array([5.0, 5.0, 5.0]), "two-sided")
    assert result.statistic == pytest.approx(4.0)
    assert result.p == pytest.approx(2 * float(sps.t.sf(4.0, 1)))
    assert result.note == ""


# --- interval_side ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ci", "alternative", "direction", "expected"),
    [
        (None, "two-sided", 1, 0),  # no interval: no side, whatever the test says
        ((-1.0, 0.0), "two-sided", 1, 1),  # ends at zero: the test's side
        ((0.0, 1.0), "two-sided", -1, -1),  # starts at zero: the test's side
        ((-2.0, -1.0), "two-sided", 0, -1),  # wholly below zero
        ((1.0, 2.0), "two-sided", 0, 1),  # wholly above zero
        ((0.5, 2.0), "two-sided", 0, 1),  # above zero though low < 1
        ((-1.0, 1.0), "two-sided", 1, 0),  # reaches over zero: no side, whatever the test says
        ((1.0, 2.0), "less", 0, 0),  # "less" does not accept the upper side
        ((-2.0, -1.0), "less", 0, -1),
        ((-2.0, -1.0), "greater", 0, 0),  # "greater" does not accept the lower side
        ((1.0, 2.0), "greater", 0, 1),
    ],
)
def test_interval_side_is_minus_one_zero_or_one(
    ci: tuple[float, float] | None, alternative: str, direction: int, expected: int
) -> None:
    side = interval_side(ci, alternative, direction)
    assert side == expected
    assert type(side) is int


# --- _test_direction --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("b", "expected"),
    [
        # a = 1, 3, 5, 7; n*m/2 = 8. U of b = #{(i, j): b_j > a_i}.
        ([0.0, 0.5, 2.0, 2.5], -1),  # U = 0 + 0 + 1 + 1 = 2 < 8
        ([2.0, 4.0, 6.0, 0.0], -1),  # U = 1 + 2 + 3 + 0 = 6 < 8 (but above n*m/3 = 5.33)
        ([0.0, 2.0, 6.0, 8.0], 0),  # U = 0 + 1 + 3 + 4 = 8 = n*m/2
        ([4.0, 6.0, 6.5, 8.0], 1),  # U = 2 + 3 + 3 + 4 = 12 > 8
    ],
)
def test_test_direction_compares_u_of_b_with_half_of_n_m(b: list[float], expected: int) -> None:
    a = [1.0, 3.0, 5.0, 7.0]
    u_of_b = sum(1 for x in a for y in b if y > x)
    assert float(sps.mannwhitneyu(b, a).statistic) == u_of_b
    comparison = compare(a, b, "x", "s", NO_EXTRAS)
    assert comparison.tests[0].statistic == u_of_b
    assert _test_direction(comparison) == expected


# --- _verdict ---------------------------------------------------------------------------------------


def test_p_equal_to_alpha_is_no_difference() -> None:
    a, b = [3.0, 4.0, 6.0], [1.0, 2.0, 3.5]
    # U of b = 1 (only 3.5 > 3). Of the C(6, 3) = 20 orderings one has U = 0 and one U = 1:
    # one-sided p = P(U <= 1) = 2/20 = 0.1, exactly alpha here: not below it.
    assert comb(6, 3) == 20
    assert float(sps.mannwhitneyu(b, a, alternative="less", method="exact").pvalue) == 0.1
    result = compare(a, b, "x", "s", Options(alpha=0.1, alternative="less", power=False))
    assert result.tests[0].p == 0.1
    assert result.verdict == SAME


def test_sign_method_cannot_tell_with_four_boots_a_side() -> None:
    # Sign test, 4 a side: smallest two-sided p = 2 * 0.5^4 = 0.125 >= 0.05: cannot tell.
    # (Mann-Whitney could: 2 / C(8, 4) = 2/70 = 0.029.)
    a, b = [10.0, 11.0, 12.0, 13.0], [1.0, 2.0, 3.0, 4.0]
    result = compare(a, b, "x", "s", Options(method="sign", power=False, bootstrap_resamples=0))
    assert result.verdict == CANNOT_TELL
    assert "0.12" in result.notes[0]


def test_one_sided_question_uses_the_narrower_interval() -> None:
    # 10 a side, U of b = 24 (four b values above 3 of a, six above 2): one-sided p = 0.026 < 0.05,
    # two-sided p = 0.052: the 95 % interval reaches over zero, the 90 % one (one-sided 95 %) not.
    a, b = _with_u(10, [3] * 4 + [2] * 6)
    one = float(sps.mannwhitneyu(b, a, alternative="less", method="exact").pvalue)
    two = float(sps.mannwhitneyu(b, a, method="exact").pvalue)
    assert one < 0.05 < two
    result = compare(a, b, "x", "s", Options(alternative="less", power=False, bootstrap_resamples=0))
    assert result.shift_ci is not None and result.shift_ci[0] < 0 < result.shift_ci[1]
    assert result.verdict == FASTER


def test_two_sided_question_uses_the_full_interval_even_when_p_is_below_alpha() -> None:
    # 51 a side (beyond the exact sizes, no ties: normal approximation), U of b = 1007.
    n = 51
    a, b = _with_u(n, [20] * 38 + [19] * 13)  # 38 * 20 + 13 * 19 = 760 + 247 = 1007
    nm = n * n
    sd = math.sqrt(nm * (2 * n + 1) / 12)  # sqrt(2601 * 103 / 12) = 149.42
    # 95 %: k = floor(1300.5 - 1.95996 * 149.42) = floor(1007.65) = 1007. All 1007 positive
    # differences are at or above D_(nm - k + 1) = D_(1595), so the interval's high end is positive.
    k95 = math.floor(nm / 2 - float(sps.norm.ppf(0.975)) * sd)
    # 90 %: k = floor(1300.5 - 1.64485 * 149.42) = 1054; high end D_(1548) < 0 (1594 negative ones).
    k90 = math.floor(nm / 2 - float(sps.norm.ppf(0.95)) * sd)
    assert (k95, k90) == (1007, 1054)
    diffs = np.sort((np.asarray(b)[:, None] - np.asarray(a)[None, :]).ravel())
    assert int(np.sum(diffs > 0)) == 1007
    assert diffs[k95 - 1] < 0 < diffs[nm - k95]
    assert diffs[nm - k90] < 0
    # Continuity-corrected normal p: (1300.5 - 1007 - 0.5) / 149.42 = 1.961 sd: p = 0.0499.
    p = float(sps.mannwhitneyu(b, a, method="asymptotic").pvalue)
    assert p == pytest.approx(0.04988, abs=1e-5)
    result = compare(a, b, "x", "s", NO_EXTRAS)
    assert result.shift_ci == pytest.approx((float(diffs[k95 - 1]), float(diffs[nm - k95])))
    assert result.verdict == SAME
    assert any("reaches over zero" in note for note in result.notes)


# --- _power_fields ----------------------------------------------------------------------------------


def test_no_power_advice_for_a_found_difference_at_24_a_side() -> None:
    a = [float(i) for i in range(24)]
    b = [v - 30.0 for v in a]  # every b below every a
    result = compare(a, b, "x", "s", Options(bootstrap_resamples=0, power_replicates=50, detect_abs=20.0))
    assert result.verdict == FASTER
    assert result.power_detect is None
    assert result.power_n_per_side is None


# --- compare_many -----------------------------------------------------------------------------------


def test_compare_many_passes_names_units_and_options_on() -> None:
    a = [float(i) for i in range(24)]
    variants = {"fast": [v - 30.0 for v in a], "slow": [v + 30.0 for v in a]}
    results = compare_many(a, variants, "boot_s", "s", NO_EXTRAS)
    assert [r.verdict for r in results] == [FASTER, SLOWER]
    assert [r.a.name for r in results] == ["baseline", "baseline"]
    assert [r.b.name for r in results] == ["fast", "slow"]
    assert [(r.metric, r.unit) for r in results] == [("boot_s", "s")] * 2
    assert [r.bootstrap_ci for r in results] == [None, None]  # bootstrap_resamples=0 was passed on
    # U = 0 and U = n*m: p = 2 / C(48, 24) each; Holm over 2 equal p-values: both become 4 / C(48, 24).
    raw = 2 / comb(48, 24)
    assert float(sps.mannwhitneyu(variants["fast"], a, method="exact").pvalue) == pytest.approx(raw)
    assert [r.p_adjusted for r in results] == pytest.approx([2 * raw, 2 * raw])
    assert [r.correction for r in results] == ["Holm correction over 2 comparisons"] * 2


def test_compare_many_without_options_uses_the_defaults() -> None:
    a = [float(i) for i in range(24)]
    results = compare_many(a, {"fast": [v - 30.0 for v in a], "slow": [v + 30.0 for v in a]}, "x", "s")
    assert [r.verdict for r in results] == [FASTER, SLOWER]
    assert [r.alpha for r in results] == [0.05, 0.05]
    assert all(r.bootstrap_ci is not None for r in results)  # 4000 resamples by default


def test_holm_turns_two_borderline_differences_into_none_and_adds_power_advice() -> None:
    a, b1 = _with_u(24, [8] * 12 + [7] * 12)  # U = 96 + 84 = 180
    _, b2 = _with_u(24, [8] * 13 + [7] * 11)  # U = 104 + 77 = 181
    p1 = float(sps.mannwhitneyu(b1, a, method="exact").pvalue)
    p2 = float(sps.mannwhitneyu(b2, a, method="exact").pvalue)
    assert p1 < p2 < 0.05
    # Holm, m = 2: the smaller becomes 2 * p1 = 0.0514 >= 0.05, the other max(2 * p1, p2) = 2 * p1.
    assert 2 * p1 == pytest.approx(0.05138, abs=1e-5)
    options = Options(bootstrap_resamples=0, power_replicates=50, detect_abs=20.0)
    alone = compare(a, b1, "x", "s", options)
    assert (alone.verdict, alone.power_detect) == (FASTER, None)
    results = compare_many(a, {"v1": b1, "v2": b2}, "x", "s", options)
    assert [r.p_adjusted for r in results] == pytest.approx([2 * p1, 2 * p1])
    assert [r.verdict for r in results] == [SAME, SAME]
    # "No difference" at 24 a side now asks for power advice, for the 20 s shift asked for.
    assert [r.power_detect for r in results] == [20.0, 20.0]
    assert all(r.power_n_per_side is not None for r in results)


def test_compare_many_keeps_the_two_sided_floor_for_each_variant() -> None:
    # 4 against 3: smallest two-sided p = 2 / C(7, 3) = 2/35 = 0.057 >= 0.05: cannot tell
    # (a one-sided question could: 1/35 = 0.029).
    a = [10.0, 11.0, 12.0, 13.0]
    variants = {"v1": [1.0, 2.0, 3.0], "v2": [20.0, 21.0, 22.0]}
    results = compare_many(a, variants, "x", "s", NO_EXTRAS)
    assert [r.verdict for r in results] == [CANNOT_TELL, CANNOT_TELL]


def test_compare_many_leaves_degenerate_variants_out_of_holm() -> None:
    # Sign test, margin 0: baseline 10 x 5.0; "same" 10 x 5.0 (all identical: degenerate, no p);
    # "fast" 10 x 3.0: all 10 of a above b's median and all 10 of b below a's median, one-sided
    # p = P(X >= 10), X ~ Bin(10, 1/2) = 1/1024; the direction came from the data: two-sided 2/1024.
    # Holm counts only the one present p-value (m = 1): it stays 2/1024.
    assert float(sps.binom.sf(9, 10, 0.5)) == pytest.approx(1 / 1024)
    options = Options(method="sign", margin=0.0, power=False, bootstrap_resamples=0)
    variants = {"same": [5.0] * 10, "fast": [3.0] * 10}
    results = compare_many([5.0] * 10, variants, "x", "s", options)
    assert [r.verdict for r in results] == [DEGENERATE, FASTER]
    assert results[0].p_adjusted is None
    assert results[1].p_adjusted == pytest.approx(2 / 1024)

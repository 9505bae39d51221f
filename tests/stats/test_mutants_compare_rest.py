"""Tests that kill mutants mutmut found surviving in bootscope/stats/compare.py
(make mutation): each asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats.compare import CANNOT_TELL, DEGENERATE, FASTER, SAME, SLOWER, Options, compare

QUIET = Options(power=False, bootstrap_resamples=0)


def _u_of_b_layout(n: int, below: list[int]) -> tuple[list[float], list[float]]:
    # a = 10, 20, ..., 10 n; b_j sits just above the below[j]-th value of a (or under the first one
    # when below[j] = 0), so exactly below[j] values of a lie under b_j: U of b = sum(below), no ties.
    a = [10.0 * (i + 1) for i in range(n)]
    b = [10.0 * c + 5.0 + j / 100 for j, c in enumerate(below)]
    return a, b


# --- _check_options ---------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0.0, 0.5, 0.7, 1.2])
def test_alpha_outside_the_open_interval_0_to_half_is_refused(alpha: float) -> None:
    a, b = [1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]
    with pytest.raises(StatsError, match=r"alpha must lie between 0 and 0\.5, not"):
        compare(a, b, "x", "s", Options(alpha=alpha, power=False, bootstrap_resamples=0))


def test_unknown_method_error_names_the_two_methods() -> None:
    with pytest.raises(StatsError, match=r"unknown method 't'; use mw or sign$"):
        compare([1.0, 2.0], [3.0, 4.0], "x", "s", Options(method="t"))


# --- input checks and default names -----------------------------------------------------------------


def test_nan_on_either_side_is_reported_under_that_side_name() -> None:
    with pytest.raises(StatsError, match=r"^side base holds a NaN"):
        compare([1.0, math.nan], [3.0, 4.0], "x", "s", QUIET, name_a="base", name_b="new")
    with pytest.raises(StatsError, match=r"^side new holds a NaN"):
        compare([1.0, 2.0], [3.0, math.inf], "x", "s", QUIET, name_a="base", name_b="new")


def test_one_sample_on_b_is_refused_with_two_needed() -> None:
    with pytest.raises(StatsError, match=r"side new has 1 sample\(s\); at least 2 are needed"):
        compare([1.0, 2.0, 3.0], [4.0], "x", "s", QUIET, name_a="base", name_b="new")


def test_p_at_alpha_gives_no_note_but_the_small_sample_ones_under_default_names() -> None:
    a, b = [1.0, 2.0, 3.5], [3.0, 4.0, 6.0]
    # U of b: 3 beats 1, 2 (2); 4 beats all 3 (3); 6 beats all 3 (3): U = 8 = n m - 1.
    # P(U >= 8) = P(U <= 1) by symmetry = 2 / C(6, 3) = 2/20 = 0.1: exactly alpha, not below it.
    assert float(sps.mannwhitneyu(b, a, alternative="greater", method="exact").pvalue) == pytest.approx(0.1)
    result = compare(a, b, "x", "s", Options(alpha=0.1, alternative="greater", power=False))
    assert result.verdict == SAME
    assert (result.a.name, result.b.name) == ("a", "b")
    assert result.notes == (
        "a: only 3 samples; ask for at least 24 when the distribution is unknown",
        "b: only 3 samples; ask for at least 24 when the distribution is unknown",
    )


# --- a clear difference at 24 a side ----------------------------------------------------------------


def test_clear_difference_at_24_a_side_has_no_notes_and_an_exact_shift() -> None:
    a = [float(i) for i in range(24)]
    b = [v - 30.0 for v in a]
    # b_j - a_i = -30 + (j - i): symmetric around -30, so the median difference is -30.
    # median(a) = (11 + 12) / 2 = 11.5: relative shift -30 / 11.5.
    result = compare(a, b, "x", "s", QUIET)
    assert result.verdict == FASTER
    assert result.notes == ()  # 24 is enough: no "only 24 samples"; no "reaches over zero"
    assert result.shift_method == "exact"  # 24 a side, no ties
    assert result.shift_estimate == pytest.approx(-30.0)
    assert result.shift_relative == pytest.approx(-30.0 / 11.5)


# --- shift_relative ---------------------------------------------------------------------------------


def test_relative_shift_is_none_when_a_median_is_zero() -> None:
    result = compare([-1.0, 0.0, 1.0], [2.0, 3.0, 4.0], "x", "s", QUIET)
    assert result.shift_relative is None


def test_relative_shift_divides_by_a_median_of_one() -> None:
    # b - a over a = 0, 1, 2 and b = 3, 4, 5: 3 2 1 / 4 3 2 / 5 4 3, median 3; median(a) = 1.
    result = compare([0.0, 1.0, 2.0], [3.0, 4.0, 5.0], "x", "s", QUIET)
    assert result.shift_estimate == pytest.approx(3.0)
    assert result.shift_relative == pytest.approx(3.0)


# --- degenerate -------------------------------------------------------------------------------------


def test_degenerate_has_its_note_no_cannot_tell_reason_and_no_power_advice() -> None:
    # 3 against 2 could not reach p < 0.05 anyway (floor 2 / C(5, 2) = 0.2), but all values being
    # equal comes first: the verdict is degenerate and no "cannot tell" sentence leads the notes.
    result = compare([5.0, 5.0, 5.0], [5.0, 5.0], "x", "s", Options(power_replicates=20))
    assert result.verdict == DEGENERATE
    assert result.notes == (
        "all values are identical (zero spread): no test is possible",
        "a: only 3 samples; ask for at least 24 when the distribution is unknown",
        "b: only 2 samples; ask for at least 24 when the distribution is unknown",
    )
    assert result.power_detect is None
    assert result.power_n_per_side is None


# --- outliers ---------------------------------------------------------------------------------------


def test_outlier_note_shows_the_first_five_of_six() -> None:
    a = [10.0] * 30 + [20.0, 21.0, 22.0, 23.0, 24.0, 25.0]
    # 36 values, 30 of them 10: numpy's Q1 (position 8.75) and Q3 (position 26.25) both fall among
    # the tens, so IQR = 0 and the fences are [10, 10]: the six values above are outliers.
    q1, q3 = np.percentile(a, [25.0, 75.0])
    assert (q1, q3) == (10.0, 10.0)
    b = [float(i) for i in range(24)]  # Q1 5.75, Q3 17.25, fences -11.5 and 34.5: none
    result = compare(a, b, "x", "s", QUIET)
    assert "a: 6 outlier(s) by Tukey's fences (20, 21, 22, 23, 24); kept" in result.notes
    assert not any(note.startswith("b:") for note in result.notes)


# --- sign method ------------------------------------------------------------------------------------


def test_sign_method_calls_slower_when_b_is_above() -> None:
    a = [float(i) for i in range(10)]
    b = [v + 30.0 for v in a]
    # Every b above a's median by more than the step 1, every a below b's median: 10/10 each,
    # one-sided p = 2^-10, two-sided 2^-9 = 0.00195 < 0.05.
    result = compare(a, b, "x", "s", Options(method="sign", power=False, bootstrap_resamples=0))
    assert result.tests[0].alternative == "greater"
    assert result.tests[0].p == pytest.approx(2.0**-10)
    assert result.verdict == SLOWER


def test_sign_method_answers_the_one_sided_question_asked() -> None:
    a = [float(i) for i in range(10, 20)]
    b = [float(i) for i in range(10)]
    # "greater" asked, b clearly smaller: k_a = #{a_i < median(b) - 1 = 3.5} = 0 and
    # k_b = #{b_j > median(a) + 1 = 15.5} = 0: p = P(X >= 0) = 1.
    options = Options(method="sign", alternative="greater", power=False, bootstrap_resamples=0)
    result = compare(a, b, "x", "s", options)
    assert result.tests[0].alternative == "greater"
    assert result.tests[0].p == pytest.approx(1.0)
    assert result.verdict == SAME


def test_sign_method_two_sided_doubles_the_p_before_the_verdict() -> None:
    a = [0.0, 0.0] + [10.0] * 8  # median 10
    b = [10.0, 10.0] + [0.0] * 8  # median 0
    # Margin 0: 8 of a above b's median, 8 of b below a's: p = P(X >= 8), X ~ Bin(10, 1/2)
    # = (1 + 10 + 45) / 1024 = 56/1024 = 0.0547 < 0.1, but two-sided 112/1024 = 0.109 >= 0.1.
    assert float(sps.binom.sf(7, 10, 0.5)) == pytest.approx(56 / 1024)
    options = Options(alpha=0.1, method="sign", margin=0.0, power=False, bootstrap_resamples=0)
    result = compare(a, b, "x", "s", options)
    assert result.tests[0].p == pytest.approx(56 / 1024)
    assert result.verdict == SAME


# --- one-sided verdicts -----------------------------------------------------------------------------


def test_one_sided_question_uses_the_interval_at_twice_alpha_not_more() -> None:
    # 51 a side (normal approximation, no ties), U of b = 34 * 21 + 17 * 20 = 714 + 340 = 1054.
    n = 51
    a, b = _u_of_b_layout(n, [21] * 34 + [20] * 17)
    nm = n * n
    sd = math.sqrt(nm * (2 * n + 1) / 12)  # sqrt(2601 * 103 / 12) = 149.42
    # One-sided p with continuity correction: (1054 + 0.5 - 1300.5) / 149.42 = -1.6463 sd: 0.0499.
    p = float(sps.mannwhitneyu(b, a, alternative="less", method="asymptotic").pvalue)
    assert p == pytest.approx(0.04986, abs=1e-4)
    assert p < 0.05
    # Interval at 2 alpha = 0.1: k = floor(1300.5 - 1.64485 * 149.42) = floor(1054.73) = 1054. Its
    # high end D_(2601 - 1054 + 1) = D_(1548) is the smallest positive difference (1547 are
    # negative): the interval reaches over zero. At 3 alpha, k = floor(1300.5 - 1.43953 * 149.42)
    # = 1085 and D_(1517) < 0: that narrower interval would have called it faster.
    assert math.floor(nm / 2 - float(sps.norm.ppf(0.95)) * sd) == 1054
    assert math.floor(nm / 2 - float(sps.norm.ppf(0.925)) * sd) == 1085
    diffs = np.sort((np.asarray(b)[:, None] - np.asarray(a)[None, :]).ravel())
    assert int(np.sum(diffs > 0)) == 1054
    assert diffs[nm - 1054] > 0 > diffs[nm - 1085]
    result = compare(a, b, "x", "s", Options(alternative="less", power=False, bootstrap_resamples=0))
    assert result.tests[0].p == pytest.approx(p)
    assert result.verdict == SAME


def test_greater_question_never_answers_faster() -> None:
    a = [1.0, 1.0, 1.0, 1.0, 1.0, 2.0]
    b = [0.0, 2.0]
    # Twice U of b: 0 beats nothing; 2 beats the five 1s (10) and ties the 2 (1): U2 = 11, U = 5.5,
    # below n m / 2 = 6. Exact p given the ties, by enumerating the C(8, 2) = 28 places of b:
    pooled = a + b
    u2s = []
    for pick in combinations(range(8), 2):
        bs = [pooled[i] for i in pick]
        rest = [pooled[i] for i in range(8) if i not in pick]
        u2s.append(sum(2 * (y > x) + (y == x) for y in bs for x in rest))
    p_greater = sum(u2 >= 11 for u2 in u2s) / len(u2s)
    assert p_greater == pytest.approx(13 / 28)  # 0.464 < 0.49
    options = Options(alpha=0.49, alternative="greater", power=False, bootstrap_resamples=0)
    result = compare(a, b, "x", "s", options)
    assert result.tests[0].p == pytest.approx(13 / 28)
    # The test's direction (U below n m / 2) is "b smaller", which a "greater" question does not
    # accept: the verdict is no difference, never "faster".
    assert result.verdict == SAME


# --- bootstrap interval -----------------------------------------------------------------------------


def test_bootstrap_interval_uses_the_seed_alpha_and_resamples_given() -> None:
    # 25 distinct values a side, so that the 5 % and 95 % points move with the number of resamples.
    a = np.array([
        13.029, 13.642, 13.147, 11.027, 10.607, 12.067, 12.861, 12.509, 13.81, 12.751, 12.64, 11.269,
        10.892, 13.484, 12.049, 12.812, 10.624, 11.564, 10.709, 11.224, 12.903, 10.519, 11.466, 12.164,
        11.332,
    ])  # fmt: skip
    b = np.array([
        10.748, 10.778, 11.418, 10.569, 11.272, 11.057, 11.425, 11.225, 12.658, 10.336, 12.199, 10.597,
        10.042, 12.211, 10.56, 10.612, 9.611, 8.902, 11.634, 9.835, 11.778, 12.848, 10.885, 9.873,
        11.394,
    ])  # fmt: skip
    seed, resamples, alpha = 7, 500, 0.1
    # Percentile bootstrap done here with numpy: a's resamples first, then b's, from one generator.
    rng = np.random.default_rng(seed)
    med_a = np.median(a[rng.integers(0, a.size, size=(resamples, a.size))], axis=1)
    med_b = np.median(b[rng.integers(0, b.size, size=(resamples, b.size))], axis=1)
    low, high = np.quantile(med_b - med_a, [alpha / 2, 1 - alpha / 2])
    options = Options(alpha=alpha, seed=seed, bootstrap_resamples=resamples, power=False)
    result = compare(a, b, "x", "s", options)
    assert result.bootstrap_ci == pytest.approx((float(low), float(high)))
    assert result.bootstrap_seed == seed


# --- power advice -----------------------------------------------------------------------------------


def test_power_advice_names_the_relative_amount_when_asked_relatively() -> None:
    a = [10.0, 10.5, 11.0, 11.5, 12.0]  # median 11
    b = [10.2, 10.7, 11.2, 11.7, 12.2]
    options = Options(detect_rel=0.5, power=True, power_replicates=20, bootstrap_resamples=0)
    result = compare(a, b, "x", "s", options)
    assert result.power_detect == pytest.approx(5.5)  # 0.5 * 11
    assert result.power_detect_relative == 0.5
    assert result.power_n_per_side is not None


def test_power_advice_has_no_relative_amount_when_asked_absolutely() -> None:
    a = [10.0, 10.5, 11.0, 11.5, 12.0]
    b = [10.2, 10.7, 11.2, 11.7, 12.2]
    options = Options(detect_abs=4.0, power=True, power_replicates=20, bootstrap_resamples=0)
    result = compare(a, b, "x", "s", options)
    assert result.power_detect == 4.0
    assert result.power_detect_relative is None


def test_no_amount_to_detect_gives_no_power_advice() -> None:
    a, b = [10.0, 10.5, 11.0], [10.2, 10.7, 11.2]
    none_asked = Options(detect_rel=None, power=True, power_replicates=20, bootstrap_resamples=0)
    assert compare(a, b, "x", "s", none_asked).power_detect is None
    # 1 % of a median of 0 is 0: nothing to detect either.
    zero = Options(power=True, power_replicates=20, bootstrap_resamples=0)
    assert compare([-1.0, 0.0, 1.0], [-0.8, 0.2, 1.2], "x", "s", zero).power_detect is None


def test_no_difference_at_24_a_side_gets_power_advice() -> None:
    a = [float(i) for i in range(24)]
    b = [v + 0.5 for v in a]  # U of b = 24 * 25 / 2 = 300 of 576: p far above 0.05
    options = Options(detect_abs=100.0, power_replicates=20, bootstrap_resamples=0)
    result = compare(a, b, "x", "s", options)
    assert result.verdict == SAME
    assert result.power_detect == 100.0
    assert result.power_n_per_side is not None


def test_one_sided_power_advice_uses_the_one_sided_floor() -> None:
    # A shift of 1000 against a spread of 2 separates the sides in every simulated draw. One-sided at
    # alpha 0.2, 2 a side already reach p = 1 / C(4, 2) = 1/6 = 0.167 < 0.2 (the interval at
    # 2 alpha = 0.4: P(U <= 0) = 1/6 <= 0.2, k = 1, [D_(1), D_(4)], all below zero): n = 2.
    # (Two-sided, 2 a side cannot: 2/6 = 0.33 >= 0.2; it takes 3.)
    a, b = [10.0, 11.0, 12.0], [10.5, 11.5, 12.5]
    options = Options(
        alpha=0.2, alternative="less", detect_abs=1000.0, power=True, power_replicates=20,
        bootstrap_resamples=0,
    )  # fmt: skip
    result = compare(a, b, "x", "s", options)
    assert result.power_n_per_side == 2
    assert result.power_achieved == 1.0


def test_power_achieved_counts_the_replicates_asked_for() -> None:
    # 7 replicates: the simulated power is a count out of 7, so 7 * power is a whole number (here 6,
    # just above the 0.8 target); 1000 replicates would give a count out of 1000.
    a = [10.0, 11.0, 12.0, 13.0, 30.0]
    b = [10.5, 11.5, 12.5, 13.5, 14.5]
    options = Options(detect_abs=3.0, power=True, power_replicates=7, seed=1, bootstrap_resamples=0)
    result = compare(a, b, "x", "s", options)
    assert result.power_achieved is not None
    assert 7 * result.power_achieved == pytest.approx(6.0)


def test_cannot_tell_is_named_first() -> None:
    # 3 against 2: smallest two-sided p = 2 / C(5, 2) = 0.2 >= 0.05.
    result = compare([1.0, 2.0, 3.0], [10.0, 11.0], "x", "s", QUIET)
    assert result.verdict == CANNOT_TELL
    assert result.notes[0].startswith("cannot tell: 3 and 2 boots cannot reach p < 0.05")

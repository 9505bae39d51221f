"""Tests that kill mutants mutmut found surviving in bootscope/stats/batch.py and
bootscope/stats/_checks.py (make mutation): each asserts a value computed by hand or by scipy, not by
the code under test."""

from __future__ import annotations

from decimal import Decimal
from math import comb

import numpy as np
import numpy.typing as npt
import pytest
from scipy import stats as sps

from bootscope.stats._checks import as_samples
from bootscope.stats.batch import SAME, SLOWER, mann_whitney_p_rows, verdict_rows

FloatArray = npt.NDArray[np.float64]


def _row(values: list[float] | FloatArray) -> FloatArray:
    return np.asarray(values, dtype=np.float64)[None, :]


def _two_level_tails(a_low: int, a_high: int, b_low: int, b_high: int) -> tuple[float, float]:
    """(P(U <= u), P(U >= u)) for U of b when every value is one of two levels: conditional on the
    ties, the number k of b's values on the low level is hypergeometric (N = n + m, K = the low
    level's size, m draws), and U of b = (m - k)(K - k) + (k (K - k) + (m - k)(H - m + k)) / 2, H the
    high level's size (b's high values beat a's low ones and tie a's high ones; b's low ones tie)."""
    m = b_low + b_high
    size_low, size_high = a_low + b_low, a_high + b_high
    k = np.arange(max(0, m - size_high), min(m, size_low) + 1)
    u = (m - k) * (size_low - k) + 0.5 * (k * (size_low - k) + (m - k) * (size_high - m + k))
    weight = sps.hypergeom.pmf(k, size_low + size_high, size_low, m)
    observed = b_high * a_low + 0.5 * (b_low * a_low + b_high * a_high)
    return float(weight[u <= observed].sum()), float(weight[u >= observed].sum())


def _two_level_rows(a_low: int, a_high: int, b_low: int, b_high: int) -> tuple[FloatArray, FloatArray]:
    return _row([0.0] * a_low + [1.0] * a_high), _row([0.0] * b_low + [1.0] * b_high)


# mann_whitney_p_rows


@pytest.mark.parametrize(
    ("a", "b", "u_of_b", "method", "other"),
    [
        # max(n, m) = 50 is the last size with the exact distribution. U of b = 21 + 31 + 36 + 41 + 46
        # = 175 (each b value beats the a values 0..floor(b)); exact 0.1515 against asymptotic 0.1473.
        (np.arange(50.0), np.array([20.5, 30.5, 35.5, 40.5, 45.5]), 175, "exact", "asymptotic"),
        # 51 values against 3, no ties: 51 > 50, so the normal approximation (scipy's own "auto" would
        # take the exact distribution, one side having at most 8 values). U of b = 10 + 5 + 1 = 16
        # (b's 41..50 beat 40.5, 46..50 beat 45.5, 50 beats 49.5); asymptotic 0.0235 against exact 0.0164.
        (np.array([40.5, 45.5, 49.5]), np.arange(51.0), 16, "asymptotic", "exact"),
    ],
    ids=["fifty-a-side-exact", "fifty-one-against-three-normal"],
)
def test_rows_at_the_exact_size_limit_get_the_p_of_their_side_of_it(
    a: FloatArray, b: FloatArray, u_of_b: int, method: str, other: str
) -> None:
    chosen = sps.mannwhitneyu(b, a, method=method)
    assert chosen.statistic == u_of_b
    assert abs(float(chosen.pvalue) - float(sps.mannwhitneyu(b, a, method=other).pvalue)) > 1e-3
    assert mann_whitney_p_rows(_row(a), _row(b))[0] == pytest.approx(float(chosen.pvalue), rel=1e-12)


def test_exact_rows_each_get_their_own_p() -> None:
    a = np.array([[1.0, 2.0, 3.0, 4.0, 5.0], [1.0, 2.0, 3.0, 4.0, 5.0]])
    b = np.array([[5.5, 6.0, 7.0, 8.0], [0.5, 2.5, 4.5, 6.5]])
    # Row 0: U of b = 20, all of a below all of b: two-sided p = 2 / C(9, 4) = 2 / 126.
    expected = [float(sps.mannwhitneyu(b[r], a[r], method="exact").pvalue) for r in range(2)]
    assert expected[0] == pytest.approx(2 / 126)
    assert expected[1] > 0.5
    assert mann_whitney_p_rows(a, b).tolist() == pytest.approx(expected, rel=1e-12)


def test_exact_rows_use_the_one_sided_p_asked_for() -> None:
    # n = m = 4, b all above a: U of b = 16, the largest of C(8, 4) = 70 splits. greater: P(U >= 16) =
    # 1/70; less: P(U <= 16) = 1.
    a = _row([1.0, 2.0, 3.0, 4.0])
    b = _row([5.0, 6.0, 7.0, 8.0])
    assert mann_whitney_p_rows(a, b, "greater")[0] == pytest.approx(1 / 70, rel=1e-12)
    assert mann_whitney_p_rows(a, b, "less")[0] == pytest.approx(1.0, rel=1e-12)


def test_fifty_tied_values_in_all_still_get_the_exact_conditional_p() -> None:
    # 25 zeros and 25 ones in all, 50 values: exact conditional on the ties. b: 8 zeros, 17 ones;
    # a: 17 zeros, 8 ones. U of b = 17 * 17 + (8 * 17 + 17 * 8) / 2 = 425 against n m / 2 = 312.5.
    low, high = _two_level_tails(17, 8, 8, 17)
    expected = min(1.0, 2.0 * min(low, high))  # twice the smaller tail: 2 * 0.011354 = 0.022707
    a, b = _two_level_rows(17, 8, 8, 17)
    asymptotic = float(sps.mannwhitneyu(b[0], a[0], method="asymptotic").pvalue)
    assert abs(expected - asymptotic) > 1e-3  # the normal approximation gives 0.0121
    assert mann_whitney_p_rows(a, b)[0] == pytest.approx(expected, rel=1e-9)


def test_tied_exact_rows_use_the_one_sided_p_asked_for() -> None:
    # a: 6 zeros, 2 ones; b: 1 zero, 7 ones. U of b = 7 * 6 + (1 * 6 + 7 * 2) / 2 = 52 of 64.
    low, high = _two_level_tails(6, 2, 1, 7)
    # greater: P(U >= 52) = P(k <= 1), k ~ hypergeom(16, 7, 8): (C(7,0) C(9,8) + C(7,1) C(9,7)) / C(16, 8)
    # = (9 + 7 * 36) / 12870 = 261 / 12870.
    assert (comb(7, 0) * comb(9, 8) + comb(7, 1) * comb(9, 7), comb(16, 8)) == (261, 12870)
    assert high == pytest.approx(261 / 12870)
    a, b = _two_level_rows(6, 2, 1, 7)
    assert mann_whitney_p_rows(a, b, "greater")[0] == pytest.approx(261 / 12870, rel=1e-9)
    assert mann_whitney_p_rows(a, b, "less")[0] == pytest.approx(low, rel=1e-9)


def test_large_rows_use_the_one_sided_normal_p_asked_for() -> None:
    # 51 values a side, no ties: normal approximation with continuity correction.
    a = np.arange(51.0)
    b = a + 10.5
    greater = float(sps.mannwhitneyu(b, a, alternative="greater", method="asymptotic").pvalue)
    two_sided = float(sps.mannwhitneyu(b, a, method="asymptotic").pvalue)
    assert greater == pytest.approx(two_sided / 2)
    assert mann_whitney_p_rows(_row(a), _row(b), "greater")[0] == pytest.approx(greater, rel=1e-12)


# verdict_rows: exact tie-conditional rows where the one-sided p is below alpha although U of b does
# not lie on the side asked about (the tie groups make the null distribution of U lopsided).


def test_less_never_calls_slower_when_its_interval_ends_at_zero_above_half() -> None:
    # a: one 0 and forty 1s; b: 0 and 2. The C(43, 2) = 903 equally likely placements of b's two values
    # among the pooled 0, 0, 1 x 40, 2 give U of b: {0,0}: 0 (1 way), {0,1}: 0.5 + 20.5 = 21 (80),
    # {0,2}: 0.5 + 41 = 41.5 (2), {1,1}: 21 + 21 = 42 (780), {1,2}: 21.5 + 41 = 62.5 (40).
    # Observed {0,2}: U = 41.5, above n m / 2 = 41, yet P(U <= 41.5) = 83/903 = 0.0919 < 0.1.
    a = [0.0] + [1.0] * 40
    b = [0.0, 2.0]
    less = sps.mannwhitneyu(b, a, alternative="less")
    assert less.statistic == 41.5
    # One-sided 90% upper end: k = largest k with P(U <= k - 1) <= 0.1; P(U <= 41) = 81/903, P(U <= 42)
    # = 863/903, so k = 42 and the end is D_(82 - 42 + 1) = D_(41). Differences b - a: -1 (40), 0 (1),
    # 1 (40), 2 (1): D_(41) = 0, the interval ends at zero and takes U's side: above, not "less".
    assert 83 / 903 < 0.1
    differences = np.sort((np.array(b)[:, None] - np.array(a)[None, :]).ravel())
    assert differences[40] == 0.0
    assert verdict_rows(_row(a), _row(b), 0.1, "less").tolist() == [SAME]


def test_greater_never_calls_faster_when_its_interval_ends_at_zero_below_half() -> None:
    # The mirror of the case above (values x -> 2 - x): a: forty 1s and one 2; b: 0 and 2.
    # U of b = 0 + (40 + 0.5) = 40.5, below n m / 2 = 41, yet P(U >= 40.5) = 83/903 < 0.1; the lower
    # end of the 90% interval is D_(42) = 0 (differences: -2 (1), -1 (40), 0 (1), 1 (40)). The interval
    # ends at zero on the side of U (below), which "greater" does not accept: SAME, neither FASTER nor
    # SLOWER.
    a = [1.0] * 40 + [2.0]
    b = [0.0, 2.0]
    assert sps.mannwhitneyu(b, a, alternative="greater").statistic == 40.5
    differences = np.sort((np.array(b)[:, None] - np.array(a)[None, :]).ravel())
    assert differences[41] == 0.0 and differences[40] < 0.0
    assert verdict_rows(_row(a), _row(b), 0.1, "greater").tolist() == [SAME]


def _u_at_half_rows() -> tuple[list[float], list[float]]:
    # a: 0, 0, forty-five 1s, 3; b: 0 and 2. n = 48, m = 2, N = 50 (exact conditional on the ties).
    # U of b = 1 (b's 0 ties a's two 0s) + 47 (b's 2 beats a's 0s and 1s) = 48 = n m / 2 exactly.
    return [0.0, 0.0] + [1.0] * 45 + [3.0], [0.0, 2.0]


def test_less_with_u_exactly_at_half_and_an_interval_ending_at_zero_is_same() -> None:
    a, b = _u_at_half_rows()
    assert sps.mannwhitneyu(b, a).statistic == 48.0
    # C(50, 2) = 1225 placements of b among 0 x 3, 1 x 45, 2, 3: U of {0,0} = 1 (3 ways), {0,1} = 1 +
    # 2 + 22 = 25 (135), {0,2} = 48 (3), every other pair 49 or more. P(U <= 48) = 141/1225 = 0.1151.
    assert 141 / 1225 < 0.15
    # Upper end at level 0.3: k = 49 (P(U <= 48) <= 0.15 < P(U <= 49)), D_(96 - 49 + 1) = D_(48);
    # differences: -3 (1), -1 (46), 0 (2), 1 (45), 2 (2), so D_(48) = 0. Zero end, U at half: no side.
    differences = np.sort((np.array(b)[:, None] - np.array(a)[None, :]).ravel())
    assert differences[47] == 0.0 and differences[0] < 0.0
    assert verdict_rows(_row(a), _row(b), 0.15, "less").tolist() == [SAME]


def test_greater_with_u_exactly_at_half_and_an_interval_ending_at_zero_is_same() -> None:
    # The mirror (x -> 3 - x) of the case above: P(U >= 48) = 141/1225 < 0.15, the lower end D_(49) = 0.
    a0, b0 = _u_at_half_rows()
    a = [3.0 - v for v in a0]
    b = [3.0 - v for v in b0]
    assert sps.mannwhitneyu(b, a).statistic == 48.0
    differences = np.sort((np.array(b)[:, None] - np.array(a)[None, :]).ravel())
    assert differences[48] == 0.0 and differences[-1] > 0.0
    assert verdict_rows(_row(a), _row(b), 0.15, "greater").tolist() == [SAME]


def test_small_rows_p_equal_to_alpha_is_not_significant_and_verdicts_are_integers() -> None:
    # n = m = 4, b all above a: two-sided exact p = 2 / C(8, 4) = 2/70; at alpha = p the 1 - 2/70
    # interval is [D_(1), D_(16)] = [1, 7], above zero, so only "p < alpha" decides.
    a = _row([1.0, 2.0, 3.0, 4.0])
    b = _row([5.0, 6.0, 7.0, 8.0])
    p = float(sps.mannwhitneyu(b[0], a[0], method="exact").pvalue)
    assert p == 2 / 70
    assert verdict_rows(a, b, p).tolist() == [SAME]
    called = verdict_rows(a, b, float(np.nextafter(p, 1.0)))
    assert called.tolist() == [SLOWER]
    assert called.dtype == np.int64


# _checks.as_samples


def test_samples_given_as_decimals_or_numeric_strings_become_floats() -> None:
    # Values read with json.load(parse_float=Decimal), from a database NUMERIC column or straight from
    # a CSV reader (strings) are converted, not refused with a numpy TypeError.
    decimals = as_samples([Decimal("8.3"), Decimal("8.2"), Decimal("10")], "a")
    assert decimals.dtype == np.float64
    assert decimals.tolist() == [8.3, 8.2, 10.0]
    strings = as_samples(["1.5", "2", "-0.25"], "b")
    assert strings.dtype == np.float64
    assert strings.tolist() == [1.5, 2.0, -0.25]
    integers = as_samples([120, 130, 2**64], "a")
    assert integers.dtype == np.float64
    assert integers.tolist() == [120.0, 130.0, 18446744073709551616.0]

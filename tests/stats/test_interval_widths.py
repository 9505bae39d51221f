"""Every interval bootscope reports, checked for its WIDTH as well as its coverage.

An interval that spans the whole sample always covers and says nothing; a test of coverage alone
passes it. Each test here computes the interval's ends independently of bootscope: from textbook
values, closed forms, or a brute-force enumeration in plain Python (math.comb, itertools), never
with the function under test or scipy's version of the same formula.

- Order-statistic intervals of a quantile (latency percentiles, fleet percentiles): the equal-tailed
  binomial ranks, enumerated here; the textbook 95 % interval of the median of 100 samples is
  X_(40)..X_(61) (e.g. Conover, Practical Nonparametric Statistics, the binomial-quantile interval).
- The median's interval of a comparison's side: Bin(n, 1/2) ranks; n = 10 gives X_(2)..X_(9) and
  n = 20 gives X_(6)..X_(15) (the usual table of the sign-test interval).
- Clopper-Pearson: closed forms at k = 0 and k = n, 1 - (alpha/2)^(1/n) and (alpha/2)^(1/n).
- Hodges-Lehmann: the exact Mann-Whitney critical value by enumerating every split of the ranks
  (n = m = 5, two-sided 5 %: U = 2, the table value), and the normal-approximation rank for n = m = 60.
- The bootstrap of the median difference: no closed form, so its width is held to the asymptotic
  width of a difference of two medians of normal samples, within a factor that a whole-sample
  interval (about 10 times wider) cannot meet.
"""

from __future__ import annotations

import itertools
import math
from statistics import NormalDist

import numpy as np
import pytest

from bootscope.stats.bootstrap import median_difference_ci
from bootscope.stats.latency import clopper_pearson, histogram_quantile, order_statistic_ranks, rate_ratio
from bootscope.stats.rank import hodges_lehmann
from bootscope.stats.summary import median_ci, median_ci_ranks


def _binom_pmf(i: int, n: int, p: float) -> float:
    if p in (0.0, 1.0):
        return float(i == (n if p == 1.0 else 0))
    log = math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
    return math.exp(log + i * math.log(p) + (n - i) * math.log1p(-p))


def _binom_cdf(k: int, n: int, p: float) -> float:
    return math.fsum(_binom_pmf(i, n, p) for i in range(k + 1))


def _equal_tailed_ranks(n: int, p: float, confidence: float) -> tuple[int, int]:
    """1-based (l, u): l the smallest count with P(B <= l) >= tail, u one past the smallest count with
    P(B <= u - 1) >= 1 - tail, B ~ Bin(n, p): the equal-tailed interval, by plain enumeration."""
    tail = (1 - confidence) / 2
    cumulative = list(itertools.accumulate(_binom_pmf(i, n, p) for i in range(n + 1)))
    low = next(k for k, c in enumerate(cumulative) if c >= tail - 1e-12)
    high = next(k for k, c in enumerate(cumulative) if c >= 1 - tail - 1e-12) + 1
    return max(low, 1), high


def test_the_median_of_100_has_the_textbook_ranks_40_and_61() -> None:
    assert order_statistic_ranks(100, 0.5, 0.95) == (40, 61)


@pytest.mark.parametrize(("n", "p"), [(50, 0.5), (200, 0.9), (1000, 0.99), (37, 0.25), (5000, 0.999)])
def test_quantile_ranks_match_the_enumerated_binomial(n: int, p: float) -> None:
    low, high = order_statistic_ranks(n, p, 0.95)
    assert (low, high) == _equal_tailed_ranks(n, p, 0.95)
    # Width: the interval covers far fewer ranks than the sample (about 4 standard deviations).
    assert high - low <= math.ceil(4.2 * math.sqrt(n * p * (1 - p))) + 2


def test_a_histogram_quantile_interval_is_as_narrow_as_its_ranks() -> None:
    # 1000 samples, one per microsecond 0..999: the value of rank r is r - 1 us.
    counts = np.ones(1000, dtype=np.int64)
    estimate = histogram_quantile(counts, 0, 0.99, 0.95)
    low, high = _equal_tailed_ranks(1000, 0.99, 0.95)
    assert estimate.value_us == 989  # rank ceil(0.99 * 1000) = 990
    assert (estimate.low_us, estimate.high_us) == (low - 1, high - 1)
    assert estimate.high_us is not None and estimate.low_us is not None
    assert estimate.high_us - estimate.low_us <= 15  # not the whole 0..999


@pytest.mark.parametrize(("n", "ranks"), [(10, (2, 9)), (20, (6, 15)), (100, (40, 61))])
def test_the_median_interval_of_a_side_has_the_sign_test_ranks(n: int, ranks: tuple[int, int]) -> None:
    assert median_ci_ranks(n, 0.05) == ranks
    values = [float(v) for v in range(1, n + 1)]  # x_(r) = r
    assert median_ci(values, 0.05) == (float(ranks[0]), float(ranks[1]))


def test_too_few_values_for_a_median_interval_give_none_not_the_range() -> None:
    # n = 5: even [min, max] covers with 1 - 2/32 = 93.75 % < 95 %.
    assert median_ci_ranks(5, 0.05) is None
    assert median_ci([1.0, 2.0, 3.0, 4.0, 5.0], 0.05) is None


@pytest.mark.parametrize("n", [1, 10, 59, 300])
def test_clopper_pearson_closed_forms_at_the_edges(n: int) -> None:
    low, high = clopper_pearson(0, n, 0.95)
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** (1 / n), rel=1e-9)
    low, high = clopper_pearson(n, n, 0.95)
    assert high == 1.0 and low == pytest.approx(0.025 ** (1 / n), rel=1e-9)


def test_clopper_pearson_in_the_middle_has_the_textbook_ends() -> None:
    # 5 of 10 at 95 %: 0.1871..0.8129 (the exact interval found in every table of it).
    low, high = clopper_pearson(5, 10, 0.95)
    assert low == pytest.approx(0.187086, abs=1e-6) and high == pytest.approx(0.812914, abs=1e-6)
    # Its ends are where the binomial tails reach 2.5 %, checked by enumeration.
    assert 1 - _binom_cdf(4, 10, low) == pytest.approx(0.025, abs=1e-9)
    assert _binom_cdf(5, 10, high) == pytest.approx(0.025, abs=1e-9)


def test_the_rate_ratio_interval_maps_the_conditional_binomial_interval() -> None:
    # 10 exceedances in a's 1000 samples, 30 in b's 1000: k_b | k = 40 ~ Bin(40, pi), R = pi / (1 - pi).
    ratio = rate_ratio(10, 1000, 30, 1000, 0.95)
    assert ratio.ratio == pytest.approx(3.0)
    # The conditional interval's ends on pi, found by enumeration of the tails.
    for pi, tail in ((ratio.low / (1 + ratio.low), "upper"), (None, "lower")):
        if pi is not None:
            assert 1 - _binom_cdf(29, 40, pi) == pytest.approx(0.025, abs=1e-7), tail
    assert ratio.high is not None
    pi_high = ratio.high / (1 + ratio.high)
    assert _binom_cdf(30, 40, pi_high) == pytest.approx(0.025, abs=1e-7)
    assert 1.4 < ratio.low < 3.0 < ratio.high < 7.0  # width: neither 0 nor unbounded


def _exact_u_critical(n: int, m: int, alpha: float) -> int:
    """The largest k with P(U <= k - 1) <= alpha / 2 under H0, by enumerating every choice of the
    first sample's ranks among n + m (U = rank sum - n(n+1)/2)."""
    splits = list(itertools.combinations(range(1, n + m + 1), n))
    u_values = [sum(ranks) - n * (n + 1) // 2 for ranks in splits]
    k = 0
    while sum(1 for u in u_values if u <= k) / len(splits) <= alpha / 2:
        k += 1
    return k


def test_hodges_lehmann_exact_interval_has_the_table_critical_value() -> None:
    assert _exact_u_critical(5, 5, 0.05) == 3  # U <= 2 is the 5 % two-sided region (the table value)
    a = [0.0, 1.0, 3.0, 7.0, 15.0]
    b = [100.0, 120.5, 141.25, 163.125, 190.0625]
    differences = sorted(y - x for x in a for y in b)
    assert len(set(differences)) == 25
    shift = hodges_lehmann(a, b, 0.05)
    assert shift.method == "exact"
    assert shift.estimate == differences[12]
    assert shift.ci == (differences[2], differences[22])


def test_hodges_lehmann_normal_interval_for_60_a_side() -> None:
    rng = np.random.default_rng(7)
    a = rng.normal(10.0, 1.0, 60)
    b = rng.normal(10.5, 1.0, 60)
    differences = sorted(float(y - x) for x in a for y in b)
    sd = math.sqrt(60 * 60 * 121 / 12)  # no ties: the variance of U is nm(n + m + 1) / 12
    k = math.floor(1800 - NormalDist().inv_cdf(0.975) * sd)
    assert k == 1426
    shift = hodges_lehmann(a, b, 0.05)
    assert shift.method == "normal approximation"
    assert shift.ci == (differences[k - 1], differences[3600 - k])
    assert shift.ci[1] - shift.ci[0] < 0.25 * (differences[-1] - differences[0])


def test_the_bootstrap_interval_is_as_wide_as_the_medians_allow() -> None:
    rng = np.random.default_rng(11)
    a = rng.normal(0.0, 1.0, 200)
    b = rng.normal(0.3, 1.0, 200)
    low, high = median_difference_ci(a, b, 0.05, seed=3)
    # The sample median's standard error is sqrt(pi / 2) * sigma / sqrt(n); of a difference, sqrt(2) of it.
    expected_width = 2 * 1.959964 * math.sqrt(2) * math.sqrt(math.pi / 2) / math.sqrt(200)
    assert 0.65 * expected_width < high - low < 1.5 * expected_width
    assert low < 0.3 < high


def test_the_bootstrap_of_constant_sides_is_a_point() -> None:
    assert median_difference_ci([2.0] * 9, [5.5] * 7, 0.05, seed=1) == (3.5, 3.5)

"""Seed 000's numbers, the verdict rule, Holm, the bootstrap and degenerate inputs."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats.bootstrap import median_difference_ci
from bootscope.stats.compare import DEGENERATE, FASTER, SAME, SLOWER, Options, compare, compare_many
from bootscope.stats.multiple import holm
from bootscope.stats.sign import resolution, sign_test

SEED_A = [8.7, 8.4, 8.6, 8.2, 9.0, 8.7, 8.8, 9.3, 8.8, 8.3]
SEED_B = [8.5, 8.2, 7.6, 8.2, 8.7, 8.2, 7.8, 8.2, 9.3, 8.4]
QUICK = Options(bootstrap_resamples=500, power_replicates=300)


def test_sign_test_reproduces_the_reviewer() -> None:
    result = sign_test(SEED_A, SEED_B)
    reviewer = sum(comb(10, i) for i in range(3)) / 2**10  # sum_{i=0}^{2} C(10, i) / 2^10
    assert reviewer == pytest.approx(0.0547, abs=5e-5)
    assert result.p == pytest.approx(reviewer)
    assert result.p == pytest.approx(sps.binomtest(8, 10, 0.5, alternative="greater").pvalue)
    assert result.statistic == 8
    assert result.alternative == "less"
    assert "two-sided p = 0.1094" in result.note
    assert sign_test(SEED_A, SEED_B, alternative="less").p == pytest.approx(reviewer)


def test_sign_test_margin_and_resolution() -> None:
    assert resolution(SEED_A, SEED_B) == pytest.approx(0.1)
    # Without a margin, 9 of a exceed b's median 8.2 (8.2 itself does not): P(X >= 9) = 11/1024,
    # and 8 of b lie below a's median 8.7 (7.6 .. 8.5): P(X >= 8) = 56/1024; the larger counts.
    assert sign_test(SEED_A, SEED_B, margin=0.0).p == pytest.approx(56 / 1024)
    # A 0.3 margin: a > 8.5 -> 7 of 10; b < 8.4 -> 6 of 10 -> P(X >= 6) = 386/1024.
    assert sign_test(SEED_A, SEED_B, margin=0.3).p == pytest.approx(386 / 1024)
    # The mirror image gives the same figure in the other direction.
    mirrored = sign_test(SEED_B, SEED_A)
    assert mirrored.alternative == "greater"
    assert mirrored.p == pytest.approx(56 / 1024)


def test_default_method_on_seed_000_is_exact_given_ties_and_says_how_many_boots() -> None:
    # Exact conditional p = 0.0332 < 0.05 and the interval [-0.8, 0] ends on the zero differences of
    # tied values, where the test points below zero: faster (the reviewer's sign test: not shown).
    result = compare(SEED_A, SEED_B, "userspace_s", "s", QUICK)
    assert result.verdict == FASTER
    assert result.tests[0].name == "mann_whitney"
    assert result.tests[0].p == pytest.approx(0.0332, abs=5e-5)
    assert result.shift_ci == pytest.approx((-0.8, 0.0))
    assert result.shift_estimate == pytest.approx(-0.4)
    assert result.shift_ci is not None and result.shift_ci[1] == pytest.approx(0.0)
    assert result.power_n_per_side is not None and result.power_n_per_side > 10
    assert result.power_detect == pytest.approx(0.01 * 8.7)
    assert result.shift_relative == pytest.approx(-0.4 / 8.7)
    sign = compare(SEED_A, SEED_B, "userspace_s", "s", Options(method="sign", power=False))
    assert sign.tests[0].p == pytest.approx(0.0546875)
    assert sign.verdict == SAME


def test_clear_shift_gives_direction_and_welch_is_reference() -> None:
    rng = np.random.default_rng(5)
    a = rng.lognormal(0.0, 0.05, 30)
    faster = compare(a, a * 0.8, "x", "s", QUICK)
    slower = compare(a, a * 1.2, "x", "s", QUICK)
    assert (faster.verdict, slower.verdict) == (FASTER, SLOWER)
    welch = faster.tests[1]
    assert welch.name == "welch"
    assert welch.p == pytest.approx(sps.ttest_ind(a * 0.8, a, equal_var=False).pvalue)
    # n >= 24 and a difference found: no power advice needed.
    assert faster.power_n_per_side is None
    one_sided = compare(a, a * 1.2, "x", "s", Options(alternative="less", power=False))
    assert one_sided.verdict == SAME


def test_holm_by_hand() -> None:
    # m = 3, sorted 0.01, 0.02, 0.04 -> 0.03, 0.04, 0.04 (monotone), back in input order.
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert holm([0.5, None, 0.01]) == [pytest.approx(0.5), None, pytest.approx(0.02)]
    # 2 * 0.8 caps at 1, and monotonicity lifts 0.9 to 1 as well.
    assert holm([0.9, 0.8]) == pytest.approx([1.0, 1.0])
    assert holm([0.3, 0.01]) == pytest.approx([0.3, 0.02])


def test_compare_many_applies_holm_and_says_so() -> None:
    rng = np.random.default_rng(8)
    base = rng.normal(10, 1, 12)
    variants = {"same": rng.normal(10, 1, 12), "fast": rng.normal(8.8, 1, 12)}
    results = compare_many(base, variants, "x", "s", QUICK, "base")
    raw = [r.tests[0].p for r in results]
    assert [r.p_adjusted for r in results] == pytest.approx(holm(raw))
    assert all("Holm" in r.correction for r in results)
    assert [r.b.name for r in results] == ["same", "fast"]


def test_bootstrap_is_seeded_and_agrees_with_scipy() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.lognormal(0, 0.2, 60), rng.lognormal(0.1, 0.2, 60)
    first = median_difference_ci(a, b, 0.05, seed=7)
    assert first == median_difference_ci(a, b, 0.05, seed=7)
    assert first != median_difference_ci(a, b, 0.05, seed=8)
    direct = sps.bootstrap(
        (a, b),
        lambda x, y, axis: np.median(y, axis=axis) - np.median(x, axis=axis),
        method="percentile",
        n_resamples=4000,
        rng=np.random.default_rng(1),
    ).confidence_interval
    width = direct.high - direct.low
    assert first[0] == pytest.approx(direct.low, abs=0.15 * width)
    assert first[1] == pytest.approx(direct.high, abs=0.15 * width)


def test_degenerate_inputs() -> None:
    constant = compare([2.0, 2.0, 2.0], [2.0, 2.0], "x", "s", QUICK)
    assert constant.verdict == DEGENERATE
    assert constant.tests[0].p is None
    assert any("identical" in note for note in constant.notes)
    # Zero spread within each side, but different sides: a real (exact) test, n = 3 a side. Given the
    # ties, 1 of the C(6, 3) = 20 splits is as extreme on each side: p = 2/20 (the normal
    # approximation said 0.047, a difference at alpha 0.05 that 3 boots a side cannot show).
    split = compare([1.0, 1.0, 1.0], [2.0, 2.0, 2.0], "x", "s", Options(power=False))
    assert split.tests[0].p == pytest.approx(0.1)
    assert split.verdict == "cannot tell"  # 3 a side: the smallest possible p is 0.1
    with pytest.raises(StatsError, match="at least 2"):
        compare([1.0], [1.0, 2.0], "x", "s")
    with pytest.raises(StatsError, match="NaN"):
        compare([1.0, float("nan")], [1.0, 2.0], "x", "s")
    with pytest.raises(StatsError, match="method"):
        compare([1.0, 2.0], [1.0, 2.0], "x", "s", Options(method="t"))


@pytest.mark.parametrize("n", [2, 3])
def test_smallest_samples_compare_without_crashing(n: int) -> None:
    a = list(np.arange(n, dtype=float))
    b = [v + 10 for v in a]
    result = compare(a, b, "x", "s", QUICK)
    assert result.tests[0].p == pytest.approx(sps.mannwhitneyu(b, a, method="exact").pvalue)
    # 2 or 3 a side cannot reach 95 % for the shift: no interval, and no p below 0.05 at all
    # (smallest two-sided p: 2 / C(2n, n) = 0.33 or 0.1), so the data cannot tell.
    assert result.shift_ci is None
    assert result.verdict == "cannot tell"
    assert any(note.startswith("cannot tell") for note in result.notes)

"""The resolution of a reference (bootscope.stats.resolution) against values computed another way:
pair moments by plain loops, pass power by simulating scipy's own Mann-Whitney test."""

from __future__ import annotations

import numpy as np
import pytest
from pair_loops import met_matrix
from scipy.stats import mannwhitneyu

from bootscope.stats.resolution import boots_needed, pair_moments, pass_power, resolution

# 24 boot times (s) with a spread like a loaded TCG host's (sd about 0.25 s): numpy's normal draw,
# seed 26, around 1.7 s, rounded to ms.
NOISY = [1.315, 1.096, 1.931, 2.013, 1.966, 1.614, 1.685, 1.642, 1.974, 1.874, 1.712, 1.842, 1.972, 1.775,
         1.483, 1.685, 1.615, 1.382, 1.291, 1.73, 1.491, 1.783, 1.54, 1.861]  # fmt: skip


def test_pair_moments_match_plain_loops() -> None:
    margin = 0.1
    n = len(NOISY)
    met = met_matrix(NOISY, margin)
    per_new = [sum(row) / (n - 1) for row in met]
    per_ref = [sum(met[k][i] for k in range(n)) / (n - 1) for i in range(n)]
    got = pair_moments(NOISY, margin)
    assert got.theta == pytest.approx(sum(per_new) / n)
    assert got.q_new == pytest.approx(sum(v * v for v in per_new) / n)
    assert got.q_ref == pytest.approx(sum(v * v for v in per_ref) / n)


@pytest.mark.parametrize(("n_new", "margin"), [(8, 0.2), (24, 0.1), (24, 0.2)])
def test_pass_power_matches_a_simulation_of_the_rank_test(n_new: int, margin: float) -> None:
    """Reference and new boots both drawn from one normal distribution (sd 0.2 s): the share of
    simulated checks that scipy's one-sided test passes at the margin is the computed power (the
    moments read from a large sample of the same distribution)."""
    rng = np.random.default_rng(5)
    n_ref, trials = 24, 2000
    passed = 0
    for _ in range(trials):
        ref = rng.normal(1.7, 0.2, n_ref)
        new = rng.normal(1.7, 0.2, n_new)
        passed += mannwhitneyu(new - margin, ref, alternative="less").pvalue < 0.05
    moments = pair_moments(rng.normal(1.7, 0.2, 1500), margin)
    computed = pass_power(moments, n_ref, n_new, 0.05)
    assert computed == pytest.approx(passed / trials, abs=0.05)


def test_the_same_boots_pass_at_the_resolution_but_not_at_five_percent() -> None:
    """The self-check of a noisy reference: at 5 % of the median scipy's test cannot show the
    same boots "not slower" (today's rule: cannot tell); at the resolution it does."""
    ref = np.asarray(NOISY)
    five_percent = 0.05 * float(np.median(ref))
    assert mannwhitneyu(ref - five_percent, ref, alternative="less").pvalue > 0.05
    found = resolution(NOISY, len(NOISY), 0.05)
    assert found is not None and found > five_percent
    assert mannwhitneyu(ref - found, ref, alternative="less").pvalue < 0.05


def test_resolution_and_boots_needed_agree_and_are_monotone() -> None:
    margins = [resolution(NOISY, n, 0.05) for n in (4, 8, 24, 100)]
    assert all(m is not None for m in margins)
    assert margins == sorted(margins, reverse=True)  # more boots resolve finer
    for n in (8, 24, 100):
        found = resolution(NOISY, n, 0.05)
        assert found is not None
        needed = boots_needed(NOISY, found, 0.05)
        assert needed is not None and needed <= n
    assert resolution([1.0, 1.1], 2, 0.05) is None  # 2 against 2: the smallest p is 1/6
    assert boots_needed(NOISY, 0.0, 0.05) is None

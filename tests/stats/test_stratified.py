"""The stratified shift (stats/stratified.py) against independent computations and its promise."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats import stratified
from bootscope.stats.rank import hodges_lehmann, pairwise_differences
from bootscope.stats.stratified import stratified_shift


def _van_elteren_z(groups: dict[str, tuple[np.ndarray, np.ndarray]]) -> float:
    """Textbook van Elteren: rank sums within each stratum (scipy's midranks), weight 1/(N+1)."""
    total = expected = variance = 0.0
    for control, canary in groups.values():
        pooled = np.concatenate([control, canary])
        n, m, size = control.size, canary.size, pooled.size
        ranks = sps.rankdata(pooled)
        w = ranks[n:].sum()
        _, counts = np.unique(pooled, return_counts=True)
        tie = float(np.sum(counts**3 - counts)) / (size * (size - 1))
        total += w / (size + 1)
        expected += m * (size + 1) / 2 / (size + 1)
        variance += n * m * ((size + 1) - tie) / 12 / (size + 1) ** 2
    return (total - expected) / np.sqrt(variance)


def test_pooled_z_is_van_elterens() -> None:
    rng = np.random.default_rng(3)
    groups = {
        "a": (rng.normal(1.0, 0.1, 40), rng.normal(1.05, 0.1, 12)),
        "b": (np.round(rng.normal(3.0, 0.3, 25), 1), np.round(rng.normal(3.1, 0.3, 30), 1)),  # ties
        "c": (rng.normal(2.0, 0.2, 8), rng.normal(2.0, 0.2, 9)),
    }
    result = stratified_shift(groups, 0.05)
    assert result.z == pytest.approx(_van_elteren_z(groups), rel=1e-9)
    assert result.p_value == pytest.approx(2 * sps.norm.sf(abs(result.z)), rel=1e-9)
    assert [s.stratum for s in result.strata] == ["a", "b", "c"]


def test_one_large_stratum_by_inversion_matches_hodges_lehmann(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    control, canary = rng.lognormal(0.0, 0.2, 300), rng.lognormal(0.1, 0.2, 200)
    plain = hodges_lehmann(control, canary, 0.05)
    monkeypatch.setattr(stratified, "MAX_PAIRWISE", 0)  # force the path a million boots take
    inverted = stratified_shift({"all": (control, canary)}, 0.05).strata[0]
    assert inverted.method.startswith("normal approximation (inverted)")
    diffs = pairwise_differences(control, canary)
    step = float(np.max(np.diff(diffs[diffs.size // 4 : 3 * diffs.size // 4])))
    assert abs(inverted.shift - plain.estimate) <= step
    assert plain.ci is not None and inverted.ci is not None
    for ours, theirs in zip(inverted.ci, plain.ci, strict=True):
        # the normal approximation puts the ends at the same order statistic, give or take one
        assert abs(ours - theirs) <= 2 * step + 1e-12


def test_aa_comparisons_cover_zero_about_95_percent() -> None:
    rng = np.random.default_rng(11)
    covered = 0
    runs = 200
    for _ in range(runs):
        groups = {
            "small": (rng.normal(1, 0.1, 15), rng.normal(1, 0.1, 10)),
            "big": (rng.gamma(4, 0.5, 60), rng.gamma(4, 0.5, 40)),
        }
        ci = stratified_shift(groups, 0.05).ci
        assert ci is not None
        covered += ci[0] <= 0 <= ci[1]
    assert 0.90 <= covered / runs <= 0.99


def test_planted_common_shift_is_inside_the_pooled_interval() -> None:
    rng = np.random.default_rng(2)
    groups = {
        name: (base + rng.normal(0, 0.1, 50), base + 0.3 + rng.normal(0, 0.1, 50))
        for name, base in (("m1", 1.0), ("m2", 5.0), ("m3", 9.0))
    }
    result = stratified_shift(groups, 0.05)
    assert result.ci is not None and result.ci[0] < 0.3 < result.ci[1] and result.ci[0] > 0
    assert all(s.ci is not None and s.ci[0] > 0 for s in result.strata)


def test_no_stratum_with_both_cohorts_is_an_error() -> None:
    with pytest.raises(StatsError, match="both cohorts"):
        stratified_shift({"a": ([1.0, 2.0], []), "b": ([], [3.0])}, 0.05)

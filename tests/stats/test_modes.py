"""Two modes, shape tests and tail shares, against hand counts and scipy; the share detector."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats.modes import shape_tests, tail_hits, two_modes
from bootscope.stats.series_watch import WatchRule, screen_p, watch_shares


def test_two_clear_modes_are_found_with_their_medians_and_shares() -> None:
    # Firecracker-like: 70 boots near 99 ms, 30 near 117 ms.
    fast = [98.0, 99.0, 100.0] * 23 + [99.0]
    slow = [116.0, 117.0, 118.0] * 10
    modes = two_modes(fast + slow)
    assert modes is not None
    assert modes[0].median == 99.0 and modes[1].median == 117.0
    assert modes[0].share == pytest.approx(0.7) and modes[1].share == pytest.approx(0.3)


def test_one_mode_a_thin_mode_and_few_values_are_not_two_modes() -> None:
    rng = np.random.default_rng(3)
    assert two_modes(rng.normal(100.0, 2.0, 200)) is None
    assert two_modes([100.0] * 95 + [150.0] * 5) is None  # 5 % is under the 10 % a mode needs
    assert two_modes([1.0, 2.0, 30.0]) is None
    with pytest.raises(StatsError, match="finite"):
        two_modes([1.0] * 10 + [math.inf])


def test_shape_tests_match_scipy_and_see_a_grown_slow_mode() -> None:
    rng = np.random.default_rng(4)
    before = np.concatenate([rng.normal(99, 1, 80), rng.normal(117, 1, 20)])
    after = np.concatenate([rng.normal(99, 1, 50), rng.normal(117, 1, 50)])
    tests = shape_tests(before, after)
    assert tests is not None
    assert tests.ks_p == pytest.approx(sps.ks_2samp(before, after).pvalue)
    assert tests.ks_p < 1e-3 and tests.ad_p <= 0.001
    assert shape_tests([1.0], [2.0, 3.0]) is None and shape_tests([5.0, 5.0], [5.0, 5.0]) is None


def test_tail_hits_count_values_above_the_quantile_per_point() -> None:
    values = np.array([1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0, 14.0])
    hits, threshold = tail_hits(values, np.array([3, 3, 2]), 0.5)
    assert threshold == pytest.approx(10.5)  # the median of the eight
    assert hits.tolist() == [0, 2, 2]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 30), min_size=4, max_size=24),
    st.lists(st.integers(0, 30), min_size=4, max_size=12),
)
def test_the_screen_is_scipys_normal_approximation(back: list[int], fore: list[int]) -> None:
    a, b = np.array(back, dtype=float), np.array(fore, dtype=float)
    if np.all(np.concatenate([a, b]) == a[0]):
        assert screen_p(a, b) == 1.0
        return
    want = sps.mannwhitneyu(b, a, alternative="two-sided", method="asymptotic", use_continuity=True).pvalue
    assert screen_p(a, b) == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_a_grown_slow_share_is_found_and_a_steady_one_is_not() -> None:
    rng = np.random.default_rng(5)
    counts = np.full(200, 5)
    share = np.where(np.arange(200) >= 120, 0.5, 0.1)
    hits = rng.binomial(counts, share)
    verdict = watch_shares(hits, counts)
    assert len(verdict.changes) == 1
    change = verdict.changes[0]
    assert (
        change.first_position <= 120 <= change.last_position
        and change.last_position - change.first_position < 8
    )
    assert change.shift == pytest.approx(0.4, abs=0.1) and change.before_median == pytest.approx(
        0.1, abs=0.05
    )
    assert change.shift_ci is not None and change.shift_ci[0] < change.shift < change.shift_ci[1]
    assert change.p < WatchRule().alpha / 100
    steady = watch_shares(rng.binomial(counts, 0.1), counts)
    assert steady.changes == () and steady.enough_history
    with pytest.raises(StatsError, match="hits"):
        watch_shares(np.array([3]), np.array([2]))


@pytest.mark.parametrize("shape", ["normal", "lognormal", "uniform", "exponential"])
def test_unimodal_samples_are_not_called_two_modes(shape: str) -> None:
    rng = np.random.default_rng(11)
    draw = {
        "normal": lambda: rng.normal(100.0, 5.0, 200),
        "lognormal": lambda: rng.lognormal(0.0, 0.3, 200),
        "uniform": lambda: rng.uniform(90.0, 110.0, 200),
        "exponential": lambda: 1.0 + rng.exponential(0.2, 200),
    }[shape]
    assert all(two_modes(draw()) is None for _ in range(30))


def test_firecracker_like_modes_are_found_from_noisy_boots() -> None:
    rng = np.random.default_rng(12)
    boots = np.concatenate([rng.normal(99.0, 2.0, 140), rng.normal(117.0, 2.0, 60)])
    modes = two_modes(boots)
    assert modes is not None
    assert modes[0].median == pytest.approx(99.0, abs=1.0) and modes[1].median == pytest.approx(
        117.0, abs=1.0
    )
    assert modes[0].share == pytest.approx(0.7, abs=0.02)


def test_compare_with_shape_reports_ks_ad_and_the_modes_of_each_side() -> None:
    from bootscope.stats.compare import Options, compare

    rng = np.random.default_rng(13)
    a = np.concatenate([rng.normal(99.0, 2.0, 160), rng.normal(117.0, 2.0, 40)])  # slow mode 20 %
    b = np.concatenate([rng.normal(99.0, 2.0, 100), rng.normal(117.0, 2.0, 100)])  # ... grown to 50 %
    result = compare(a, b, "firecracker_ms", "ms", Options(shape=True, bootstrap_resamples=0), "old", "new")
    tests = {test.name: test for test in result.tests}
    assert tests["kolmogorov_smirnov"].p == pytest.approx(sps.ks_2samp(a, b).pvalue)
    assert tests["kolmogorov_smirnov"].p < 1e-6
    assert tests["anderson_darling"].p == pytest.approx(0.001)  # scipy's floor: said in its note
    assert "clipped" in tests["anderson_darling"].note
    modes = [note for note in result.notes if "two modes" in note]
    assert modes[0].startswith("old: two modes, 99") and "(80%)" in modes[0] and "(20%)" in modes[0]
    assert modes[1].startswith("new: two modes, 99") and modes[1].count("(50%)") == 2
    plain = compare(a, b, "firecracker_ms", "ms", Options(bootstrap_resamples=0), "old", "new")
    assert {test.name for test in plain.tests} == {"mann_whitney", "welch"}

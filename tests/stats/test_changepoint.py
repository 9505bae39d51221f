"""Change points: exactness of the split statistic, false alarms on flat series, power on a real step."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats.changepoint import detect_change_points, split_statistics


def test_split_statistic_matches_scipy_mannwhitney() -> None:
    rng = np.random.default_rng(3)
    groups = [rng.normal(size=4) for _ in range(5)]
    z = split_statistics(groups)
    for k in range(4):
        before = np.concatenate(groups[: k + 1])
        after = np.concatenate(groups[k + 1 :])
        u_after = sps.mannwhitneyu(after, before).statistic
        n1, n2 = len(before), len(after)
        expected = (u_after - n1 * n2 / 2) / np.sqrt(n1 * n2 * (n1 + n2 + 1) / 12)
        assert z[k] == pytest.approx(expected)


def test_flat_series_false_detection_rate_is_about_alpha() -> None:
    rng = np.random.default_rng(12345)
    trials = 300
    detections = 0
    for trial in range(trials):
        # Skewed, like boot times: lognormal around 2.5 s.
        groups = [2.5 * rng.lognormal(0.0, 0.05, size=3) for _ in range(6)]
        result = detect_change_points(groups, alpha=0.05, permutations=199, seed=trial)
        detections += bool(result.change_points)
    rate = detections / trials
    # Binomial(300, 0.05): mean 15, sd 3.8; 0.11 is > 5 sd above, a broken test would be far off.
    assert rate <= 0.11
    assert rate > 0.0  # a test that never rejects is not a test either


def test_real_step_is_found_at_the_right_index() -> None:
    rng = np.random.default_rng(7)
    groups = [2.5 + rng.normal(0, 0.1, size=4) for _ in range(3)]
    groups += [3.5 + rng.normal(0, 0.1, size=4) for _ in range(3)]
    result = detect_change_points(groups, alpha=0.05, seed=1)
    assert [c.index for c in result.change_points] == [2]
    change = result.change_points[0]
    assert change.shift == pytest.approx(1.0, abs=0.15)
    assert change.shift_ci is not None and change.shift_ci[0] < 1.0 < change.shift_ci[1]
    assert change.p < 0.01
    assert change.n_before == 12 and change.n_after == 12
    # The shift is the Hodges-Lehmann estimate between the pooled segments: median of differences.
    before, after = np.concatenate(groups[:3]), np.concatenate(groups[3:])
    assert change.shift == pytest.approx(np.median(np.subtract.outer(after, before)))


def test_two_steps_are_both_found() -> None:
    rng = np.random.default_rng(11)
    levels = [1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 0.5, 0.5, 0.5]
    groups = [level + rng.normal(0, 0.05, size=5) for level in levels]
    result = detect_change_points(groups, alpha=0.05, seed=2)
    assert [c.index for c in result.change_points] == [2, 5]
    assert result.change_points[0].shift > 0 > result.change_points[1].shift


def test_same_seed_same_answer() -> None:
    groups = [[1.0, 1.1, 0.9], [1.0, 1.2, 1.05], [1.5, 1.6, 1.4]]
    a = detect_change_points(groups, seed=5)
    b = detect_change_points(groups, seed=5)
    assert a == b


@pytest.mark.parametrize(
    "groups",
    [[[1.0, 2.0]], [[1.0], []], [[1.0], [float("nan")]]],
)
def test_bad_series_raise(groups: list[list[float]]) -> None:
    with pytest.raises(StatsError):
        detect_change_points(groups)


def test_constant_series_has_no_change_point() -> None:
    # All values tied: every split statistic is 0, the permutation p-value is 1.
    result = detect_change_points([[2.0, 2.0], [2.0, 2.0], [2.0, 2.0]], seed=0)
    assert result.change_points == ()
    assert result.tests == 1

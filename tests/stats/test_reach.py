"""What a sample size can prove: the smallest possible p-value against an enumeration of every
ordering and against scipy's exact test on perfectly separated samples; "cannot tell" in compare."""

from __future__ import annotations

from itertools import combinations

import pytest
from scipy import stats as sps

from bootscope.stats.compare import CANNOT_TELL, SAME, compare
from bootscope.stats.reach import boots_to_reach, cannot_tell_reason, smallest_p


def _min_two_sided_p_by_enumeration(n: int, m: int) -> float:
    """Every way of choosing which of n + m distinct ranks are b's is equally likely under H0; the
    most extreme U (0) has probability 1 / count, doubled for two sides."""
    ranks = range(n + m)
    u_values = [sum(r for r in chosen) - m * (m - 1) / 2 for chosen in combinations(ranks, m)]
    extreme = sum(1 for u in u_values if u == min(u_values))
    return min(1.0, 2 * extreme / len(u_values))


@pytest.mark.parametrize(("n", "m"), [(3, 2), (2, 2), (4, 4), (5, 3), (6, 6)])
def test_smallest_p_is_that_of_the_most_extreme_ordering(n: int, m: int) -> None:
    assert smallest_p(n, m) == pytest.approx(_min_two_sided_p_by_enumeration(n, m))
    separated = sps.mannwhitneyu(list(range(10, 10 + m)), list(range(n)), method="exact")
    assert smallest_p(n, m) == pytest.approx(separated.pvalue)


def test_three_against_two_cannot_reach_five_percent() -> None:
    assert smallest_p(3, 2) == pytest.approx(0.2)  # 2 / C(5, 2) = 2 / 10
    # 3 a side: 2 / C(6, 3) = 0.1; 4 a side: 2 / C(8, 4) = 0.0286 < 0.05.
    assert boots_to_reach(0.05) == 4
    assert smallest_p(1, 1, method="sign") == 1.0
    reason = cannot_tell_reason(3, 2, 0.05)
    assert reason is not None and "smallest possible p = 0.2" in reason and "4 boots a side" in reason
    assert cannot_tell_reason(4, 4, 0.05) is None


def test_compare_says_cannot_tell_not_no_difference() -> None:
    result = compare([8.7, 8.4, 8.6], [9.5, 9.9], "kernel_init_s", "s")
    assert result.verdict == CANNOT_TELL != SAME
    assert result.tests[0].p == pytest.approx(0.2)
    assert any("cannot reach p < 0.05" in note for note in result.notes)
    # Enough boots to decide: the usual verdicts.
    assert compare([1.0, 1.1, 1.2, 1.3], [1.05, 1.15, 1.25, 1.35], "x", "s").verdict == SAME

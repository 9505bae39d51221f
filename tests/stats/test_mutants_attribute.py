"""Tests that kill mutants mutmut found surviving in bootscope/stats/attribution.py
(make mutation): each asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

from bootscope.errors import StatsError
from bootscope.stats.attribution import (
    APPEARED,
    COMPARED,
    PRINTED_ONE_SIDE,
    SHARE_OF_MOVES,
    SHARE_OF_TOTAL,
    ComponentSamples,
    ComponentShift,
    Offsets,
    attribute,
    offsets,
)

# The same totals on both sides: the total's shift is exactly 0 (of the 36 differences b - a,
# 15 are negative, 6 are exactly 0 and 15 positive: the middle two are 0) and it did not move.
SAME_TOTAL = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5]
BOOTS = 6


def _present_in_all(kind: str, name: str, value: float, side: str) -> ComponentSamples:
    """A component in every one of the 6 boots of one side and none of the other."""
    values = (value,) * BOOTS
    a, b = ((), values) if side == "b" else (values, ())
    return ComponentSamples(kind, name, a, b, BOOTS, BOOTS)


def _row(kind: str, name: str, shift: float, moved: bool) -> ComponentShift:
    return ComponentShift(kind, name, 6, 0.1, 6, 0.1, shift, None, 0.01, 0.01, None, COMPARED, moved)


def test_a_nan_is_refused_with_the_whole_message() -> None:
    item = ComponentSamples("phase", "setup", (1.0, math.nan, 2.0), (1.0, 2.0, 3.0))
    with pytest.raises(StatsError, match=r"^a component holds a NaN or infinite value$"):
        attribute(SAME_TOTAL, SAME_TOTAL, [item], metric="kernel_init_s")


def test_one_sided_components_decompose_rank_share_and_move_by_hand() -> None:
    items = [
        # In all 6 boots of a, none of b, always 0 s: moved (below), by -0.0 s.
        _present_in_all("gap", "zero", 0.0, "a"),
        # In all 6 boots of b, none of a: moved by +0.2 s.
        _present_in_all("gap", "new", 0.2, "b"),
        # In 1 of 6 boots of b, none of a: 0.1 s, not moved.
        ComponentSamples("gap", "rare", (), (0.1,), BOOTS, BOOTS),
    ]
    result = attribute(SAME_TOTAL, SAME_TOTAL, items, metric="kernel_init_s")
    by_name = {c.name: c for c in result.components}
    # Fisher: 6 of 6 against 0 of 6 gives p = 2 / C(12, 6) = 2 / 924; 1 of 6 against 0 of 6 gives 1.
    assert by_name["zero"].p == pytest.approx(sps.fisher_exact([[6, 0], [0, 6]]).pvalue)
    assert by_name["zero"].p == pytest.approx(2 / 924)
    assert by_name["rare"].p == pytest.approx(1.0)
    # BH over m = 3: q = min(3 * (2/924) / 1, 3 * (2/924) / 2) = 3 / 924 for both; 1 stays 1.
    assert by_name["new"].q == pytest.approx(3 / 924)
    assert by_name["rare"].q == pytest.approx(1.0)
    assert by_name["new"].status == APPEARED and by_name["new"].moved is True
    assert by_name["zero"].moved is True
    assert by_name["rare"].moved is False
    # Ranked by |shift|: 0.2, 0.1, 0.0.
    assert [c.name for c in result.components] == ["new", "rare", "zero"]
    (gap,) = result.by_kind
    assert gap.kind == "gap"
    assert gap.moved == 2
    assert gap.explained_s == pytest.approx(0.2)  # -0.0 + 0.2 (the moved ones)
    assert gap.sum_all_s == pytest.approx(0.3)  # 0.0 + 0.2 + 0.1
    assert gap.sum_abs_s == pytest.approx(0.3)  # |0.0| + |0.2| + |0.1|
    # The total held: shares of the sum of absolute shifts, 0.2 / 0.3 and 0.1 / 0.3; none of the total.
    assert result.share_basis == SHARE_OF_MOVES
    assert by_name["new"].share_of_moves == pytest.approx(2 / 3)
    assert by_name["rare"].share_of_moves == pytest.approx(1 / 3)
    assert by_name["zero"].share_of_moves == 0.0
    assert all(c.share_of_total is None for c in result.components)
    assert result.correction == "Benjamini-Hochberg over 3 components, false discovery rate 0.05"
    # Unexplained: the total's 0 less the moved gaps' 0.2.
    assert result.explained_kind == "gap"
    assert result.unexplained_s == pytest.approx(-0.2)


def test_components_with_different_boot_counts_are_compared_apart() -> None:
    items = [
        ComponentSamples("phase", "setup", (1.0, 2.0, 3.0), (4.0, 5.0, 6.0)),
        ComponentSamples("phase", "mm_init", (1.0, 2.0, 3.0, 4.0), (5.0, 6.0, 7.0, 8.0)),
    ]
    result = attribute(SAME_TOTAL, SAME_TOTAL, items, metric="kernel_init_s")
    by_name = {c.name: c for c in result.components}
    # Medians by hand: 2 and 5; (2 + 3) / 2 = 2.5 and (6 + 7) / 2 = 6.5.
    assert (by_name["setup"].median_a_s, by_name["setup"].median_b_s) == (2.0, 5.0)
    assert (by_name["mm_init"].median_a_s, by_name["mm_init"].median_b_s) == (2.5, 6.5)
    assert (by_name["setup"].n_a, by_name["mm_init"].n_a) == (3, 4)


def test_rows_of_a_printed_kind_on_one_side_are_set_apart_without_a_p_value() -> None:
    items = [
        _present_in_all("initcall", "blacklisted", 0.2, "b"),
        _present_in_all("gap", "new line", 0.1, "b"),
        ComponentSamples("initcall", "kept", (1.0, 2.0, 3.0), (1.5, 2.5, 3.5), BOOTS, BOOTS),
    ]
    result = attribute(
        SAME_TOTAL, SAME_TOTAL, items, metric="kernel_init_s", printed_kinds=frozenset({"initcall"})
    )
    (printed,) = result.printed_one_side
    assert (printed.kind, printed.name) == ("initcall", "blacklisted")
    assert printed.status == PRINTED_ONE_SIDE
    assert printed.p is None and printed.moved is False
    assert sorted(c.name for c in result.components) == ["kept", "new line"]


def test_a_compared_component_below_the_fdr_whose_interval_reaches_over_zero_is_not_moved() -> None:
    a, b = (1.0, 2.0, 3.0, 4.0, 5.0), (3.5, 4.5, 5.5, 6.5, 7.5)
    item = ComponentSamples("phase", "setup", a, b)
    result = attribute(SAME_TOTAL, SAME_TOTAL, [item], metric="kernel_init_s", alpha=0.05, fdr=0.2)
    (shift,) = result.components
    # U of b = 3 + 4 + 5 + 5 + 5 = 22 of 25; splits with U >= 22: 1 + 1 + 2 + 3 = 7 of C(10, 5) = 252,
    # two-sided p = 14 / 252 = 1 / 18 < 0.2, but the 95 % interval is [-0.5, 5.5].
    assert shift.p == pytest.approx(1 / 18)
    assert shift.p == pytest.approx(sps.mannwhitneyu(b, a, method="exact").pvalue)
    assert shift.q == pytest.approx(1 / 18)
    assert shift.shift_ci_s is not None and shift.shift_ci_s[0] < 0 < shift.shift_ci_s[1]
    assert shift.moved is False


def test_a_compared_component_whose_q_equals_the_fdr_is_not_moved() -> None:
    a, b = (1.0, 2.0, 3.0), (4.0, 5.0, 6.0, 7.0)
    # b above all of a: two-sided p = 2 / C(7, 3) = 2 / 35 (one component: q = p).
    p = float(sps.mannwhitneyu(b, a, method="exact").pvalue)
    assert p == pytest.approx(2 / 35)
    item = ComponentSamples("phase", "setup", a, b)
    at = attribute(SAME_TOTAL, SAME_TOTAL, [item], metric="kernel_init_s", alpha=0.1, fdr=p)
    (shift,) = at.components
    assert shift.q == p
    # The 90 % interval starts at the smallest difference, 4 - 3 = 1 > 0.
    assert shift.shift_ci_s is not None and shift.shift_ci_s[0] == pytest.approx(1.0)
    assert shift.moved is False
    above = attribute(
        SAME_TOTAL, SAME_TOTAL, [item], metric="kernel_init_s", alpha=0.1, fdr=math.nextafter(p, 1.0)
    )
    assert above.components[0].moved is True


def test_an_appeared_component_whose_q_equals_the_fdr_is_not_moved() -> None:
    item = ComponentSamples("gap", "new line", (), (0.1, 0.1, 0.1), BOOTS, BOOTS)
    # 0 of 6 boots of a against 3 of 6 of b: Fisher's p from scipy, the same table.
    p = float(sps.fisher_exact([[0, 6], [3, 3]]).pvalue)
    assert p == pytest.approx(0.1818, abs=1e-4)  # (1 + 1) * C(6,3)C(6,0) / C(12,3) = 40 / 220
    at = attribute(SAME_TOTAL, SAME_TOTAL, [item], metric="kernel_init_s", fdr=p)
    (shift,) = at.components
    assert shift.q == p
    assert shift.moved is False
    above = attribute(SAME_TOTAL, SAME_TOTAL, [item], metric="kernel_init_s", fdr=math.nextafter(p, 1.0))
    assert above.components[0].moved is True


def test_the_explained_kind_is_the_one_asked_for_or_else_the_first_ranked() -> None:
    items = [_present_in_all("gap", "new line", 0.3, "b"), _present_in_all("phase", "early", 0.1, "a")]
    # Both moved (q = 2 / 924); ranked: the gap (0.3 s) before the phase (-0.1 s).
    asked = attribute(SAME_TOTAL, SAME_TOTAL, items, metric="kernel_init_s", additive_kind="phase")
    assert [c.name for c in asked.components] == ["new line", "early"]
    assert asked.explained_kind == "phase"
    assert asked.unexplained_s == pytest.approx(0.1)  # 0 - (-0.1)
    absent = attribute(SAME_TOTAL, SAME_TOTAL, items, metric="kernel_init_s", additive_kind="unit")
    assert absent.explained_kind == "gap"
    assert absent.unexplained_s == pytest.approx(-0.3)  # 0 - 0.3


def test_attribute_names_offsets_among_one_sided_components() -> None:
    items = [_present_in_all("gap", "new line", 0.2, "b"), _present_in_all("gap", "old line", 0.3, "a")]
    result = attribute(SAME_TOTAL, SAME_TOTAL, items, metric="kernel_init_s", additive_kind="gap")
    assert result.offsets == Offsets("gap", (("new line", 0.2),), (("old line", -0.3),), 0, 0)


def test_the_total_is_compared_with_the_given_names_metric_unit_and_alpha() -> None:
    result = attribute(
        [1.0, 1.1, 1.2], [1.3, 1.4, 1.5], [], metric="kernel_init_s", alpha=0.1, name_a="base", name_b="slow"
    )
    total = result.total
    assert (total.metric, total.unit, total.alpha) == ("kernel_init_s", "s", 0.1)
    assert (total.a.name, total.b.name) == ("base", "slow")
    # No bootstrap interval and no power advice: attribution only needs the verdict.
    assert total.bootstrap_ci is None
    assert total.power_n_per_side is None and total.power_detect is None
    # No component: nothing explains the total, so no unexplained figure either.
    assert result.explained_kind is None and result.unexplained_s is None and result.offsets is None
    assert result.correction == "Benjamini-Hochberg over 0 components, false discovery rate 0.05"


def test_the_sides_are_called_a_and_b_by_default() -> None:
    total = attribute(SAME_TOTAL, SAME_TOTAL, [], metric="kernel_init_s").total
    assert (total.a.name, total.b.name) == ("a", "b")


def test_a_total_that_shifted_without_moving_gives_no_share_of_it() -> None:
    # b = a + 0.05: the differences are 0.05 + 0.1 k, k = -5..5, symmetric about 0.05 (the shift),
    # far from significant.
    b_total = [x + 0.05 for x in SAME_TOTAL]
    result = attribute(SAME_TOTAL, b_total, [_present_in_all("gap", "new line", 0.2, "b")], metric="m")
    assert result.total.verdict == "no significant difference"
    assert result.total.shift_estimate == pytest.approx(0.05)
    assert result.share_basis == SHARE_OF_MOVES
    assert result.components[0].share_of_total is None
    assert result.components[0].share_of_moves == pytest.approx(1.0)  # 0.2 / |0.2|


def test_a_total_that_moved_gives_shares_of_it() -> None:
    # b = a + 1: every difference is 1 + 0.1 k, median 1; b above all of a, p = 2 / 924.
    b_total = [x + 1.0 for x in SAME_TOTAL]
    result = attribute(SAME_TOTAL, b_total, [_present_in_all("gap", "new line", 0.2, "b")], metric="m")
    assert result.total.verdict == "slower"
    assert result.share_basis == SHARE_OF_TOTAL
    assert result.components[0].share_of_total == pytest.approx(0.2)  # 0.2 / 1.0


def test_offsets_name_the_moved_components_of_the_kind_largest_first() -> None:
    ranked = [
        _row("phase", "r1", 0.1, True),
        _row("phase", "r2", 0.3, True),
        _row("phase", "f1", -0.1, True),
        _row("phase", "f2", -0.4, True),
        _row("phase", "still", 0.5, False),  # not moved
        _row("initcall", "other", -0.9, True),  # another kind
    ]
    # Rising by size, largest first: r2 (0.3), r1 (0.1); falling: f2 (-0.4), f1 (-0.1).
    assert offsets("phase", ranked) == Offsets(
        "phase", (("r2", 0.3), ("r1", 0.1)), (("f2", -0.4), ("f1", -0.1)), 0, 0
    )


def test_offsets_name_three_a_side_and_count_the_rest() -> None:
    ranked = [_row("phase", f"r{i}", 0.1 * i, True) for i in range(1, 6)]
    ranked += [_row("phase", f"f{i}", -0.1 * i, True) for i in range(1, 5)]
    found = offsets("phase", ranked)
    assert found is not None
    assert [name for name, _ in found.rising] == ["r5", "r4", "r3"]
    assert [name for name, _ in found.falling] == ["f4", "f3", "f2"]
    # 5 - 3 = 2 more rising, 4 - 3 = 1 more falling.
    assert (found.more_rising, found.more_falling) == (2, 1)


@pytest.mark.parametrize("other", [0.2, -0.2])
def test_a_moved_component_of_zero_shift_offsets_nothing(other: float) -> None:
    ranked = [_row("phase", "zero", 0.0, True), _row("phase", "moved", other, True)]
    assert offsets("phase", ranked) is None


def test_components_moving_one_way_below_a_second_offset_nothing() -> None:
    ranked = [_row("phase", "r1", 0.3, True), _row("phase", "r2", 0.2, True)]
    assert offsets("phase", ranked) is None


def test_an_interval_ending_at_zero_with_the_test_pointing_nowhere_is_not_moved() -> None:
    # U of b = 3 * 2 (each 1 above the two 0s) + 3 * (2 + 2 * 1/2) (each 2 above the 0s, tied with
    # the 2s) = 15 = 5 * 6 / 2: the test points to neither side, yet with these ties its exact
    # two-sided p is below 1, so a large fdr lets q through and only the interval decides. Of the 30
    # differences b - a (-2 x3, -1 x9, 0 x6, 1 x6, 2 x6) the 51 % interval ends at 0.
    a, b = [0.0, 0.0, 2.0, 2.0, 3.0], [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]
    assert sps.mannwhitneyu(b, a).statistic == 15.0 == len(a) * len(b) / 2

    def u_of_first(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
        return np.asarray(sps.mannwhitneyu(x, y, axis=axis).statistic)

    # Every one of the C(11, 5) = 462 splits, given the ties.
    expected_p = sps.permutation_test(
        (b, a), u_of_first, permutation_type="independent", n_resamples=np.inf, vectorized=True
    ).pvalue
    assert expected_p < 0.95
    item = ComponentSamples("phase", "setup", tuple(a), tuple(b))
    result = attribute(SAME_TOTAL, SAME_TOTAL, [item], metric="kernel_init_s", alpha=0.49, fdr=0.95)
    (shift,) = result.components
    assert shift.p == pytest.approx(expected_p, rel=1e-9)
    assert shift.q is not None and shift.q < 0.95
    assert shift.shift_ci_s is not None and 0.0 in shift.shift_ci_s  # the case's premise
    assert shift.moved is False


@pytest.mark.parametrize("fdr", [0.0, 1.0, -0.1, 1.5])
def test_an_fdr_outside_zero_and_one_is_refused(fdr: float) -> None:
    # Checked by attribute itself, not only by the CLI's --fdr: with fdr = 1 every q passes.
    with pytest.raises(StatsError, match="false discovery rate must lie between 0 and 1"):
        attribute([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [], metric="kernel_init_s", fdr=fdr)

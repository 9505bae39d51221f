"""Tests that kill mutants mutmut found surviving in bootscope/stats/effects.py
(make mutation): each asserts a value computed by hand or by scipy, not by the code under test."""

from __future__ import annotations

import math

import pytest

from bootscope.errors import StatsError
from bootscope.stats.effects import main_effects


def test_empty_grid_has_an_empty_parameter_tuple() -> None:
    effects = main_effects([])
    assert effects.parameters == ()
    assert effects.dominant is None


def test_parameter_order_decides_the_order_of_equal_spreads() -> None:
    # The cells name "a" first, but the caller's order puts "b" first.
    cells = [
        ({"a": "0", "b": "0"}, [1.0]),
        ({"a": "0", "b": "1"}, [2.0]),
        ({"a": "1", "b": "0"}, [2.0]),
        ({"a": "1", "b": "1"}, [3.0]),
    ]
    # a=0 pools 1.0 2.0 -> median 1.5; a=1 pools 2.0 3.0 -> 2.5: spread 1.0.
    # b=0 pools 1.0 2.0 -> 1.5; b=1 pools 2.0 3.0 -> 2.5: spread 1.0 too, so the stable sort keeps
    # the given order b, a.
    effects = main_effects(cells, parameter_order=["b", "a"])
    assert [p.name for p in effects.parameters] == ["b", "a"]
    assert [p.spread for p in effects.parameters] == [1.0, 1.0]
    assert effects.dominant == "b"


def test_parameter_order_naming_a_parameter_the_cells_lack_raises() -> None:
    with pytest.raises(StatsError, match="different parameters"):
        main_effects([({"a": "0"}, [1.0]), ({"a": "1"}, [2.0])], parameter_order=["x"])


def test_mismatched_cells_name_both_parameter_sets() -> None:
    with pytest.raises(StatsError, match=r"grid cells name different parameters: \['b'\] vs \['a'\]"):
        main_effects([({"a": "1"}, [1.0]), ({"b": "1"}, [1.0])])


def test_non_finite_samples_are_left_out_of_a_level() -> None:
    cells = [
        ({"k": "x"}, [1.0, math.nan, 3.0, math.inf]),
        ({"k": "y"}, [5.0, 7.0]),
    ]
    effects = main_effects(cells)
    x, y = effects.parameters[0].levels
    # x keeps 1.0 3.0 -> n 2, median 2.0; y: 5.0 7.0 -> median 6.0; spread 6.0 - 2.0 = 4.0.
    assert (x.n, x.median) == (2, 2.0)
    assert (y.n, y.median) == (2, 6.0)
    assert effects.parameters[0].spread == 4.0


def test_a_spread_below_one_still_names_the_dominant_parameter() -> None:
    cells = [({"k": "x"}, [1.0]), ({"k": "y"}, [1.5])]
    effects = main_effects(cells)
    # Level medians 1.0 and 1.5: spread 0.5 > 0, so "k" dominates.
    assert effects.parameters[0].spread == 0.5
    assert effects.dominant == "k"

"""Main effects of a grid, checked against medians computed by hand."""

from __future__ import annotations

import pytest

from bootscope.errors import StatsError
from bootscope.stats.effects import main_effects


def test_main_effects_by_hand() -> None:
    cells = [
        ({"smp": "1", "rcu": "0"}, [1.0, 1.2]),
        ({"smp": "1", "rcu": "1"}, [1.1, 1.3]),
        ({"smp": "2", "rcu": "0"}, [2.0, 2.2]),
        ({"smp": "2", "rcu": "1"}, [2.1, 2.3]),
    ]
    effects = main_effects(cells)
    assert effects.dominant == "smp"
    smp, rcu = effects.parameters
    assert smp.name == "smp" and rcu.name == "rcu"
    # smp=1 pools 1.0 1.2 1.1 1.3 -> median 1.15; smp=2 -> 2.15.
    assert [lv.median for lv in smp.levels] == pytest.approx([1.15, 2.15])
    assert smp.spread == pytest.approx(1.0)
    assert smp.best_level == "1" and smp.worst_level == "2"
    # rcu=0 pools 1.0 1.2 2.0 2.2 -> 1.6; rcu=1 -> 1.7.
    assert [lv.median for lv in rcu.levels] == pytest.approx([1.6, 1.7])
    assert rcu.spread == pytest.approx(0.1)
    assert [lv.n for lv in rcu.levels] == [4, 4]


def test_single_level_and_empty() -> None:
    effects = main_effects([({"k": "a"}, [1.0, 2.0])])
    assert effects.parameters[0].spread == 0.0
    assert effects.dominant is None
    assert main_effects([]).dominant is None


def test_mismatched_cells_raise() -> None:
    with pytest.raises(StatsError):
        main_effects([({"a": "1"}, [1.0]), ({"b": "1"}, [1.0])])

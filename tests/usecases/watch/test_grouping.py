"""How steps become alerts: one alert per shared revision range, the most precise steps first.

The case that made the rule: Debian's cloud kernels booted in order with a regression planted at
6.1.0-55 (bench/watch_history.py); two revisions later 6.12 moved other metrics. One series
(host_wall_s) moved at both and its one step's plausible range covered both; grouping by any
overlap made the two changes one alert spanning 6.1.0-55..6.12.100.
"""

from __future__ import annotations

from bootscope.stats.series_watch import WatchRule
from bootscope.store.watch import AlertItem
from bootscope.usecases.watch.detect import alert_range, family_key, family_steps, group_items

ORDER = {f"r{i:02d}": float(i) for i in range(20)}


def _step(series: str, at: int, first: int, last: int, shift: float = 0.1) -> AlertItem:
    return AlertItem(
        series=series, fingerprint={"machine": "m"}, metric="kernel_init_s", component="total",
        revision=f"r{at:02d}", first_revision=f"r{first:02d}", last_revision=f"r{last:02d}",
        good_revision=f"r{first - 1:02d}", shift=shift,
    )  # fmt: skip


def test_a_wide_step_joins_the_change_holding_its_revision_and_does_not_glue_two() -> None:
    planted = [_step("a", 8, 8, 8), _step("b", 8, 8, 8)]
    later = [_step("c", 10, 10, 10), _step("d", 10, 10, 10)]
    wide = _step("wall", 10, 7, 10)  # its range holds both changes, its revision the second
    alerts = group_items([wide, *planted, *later], ORDER, WatchRule())
    assert [(a.first_revision, a.last_revision, a.good_revision) for a in alerts] == [
        ("r08", "r08", "r07"),
        ("r10", "r10", "r09"),
    ]
    assert sorted(i.series for i in alerts[0].items) == ["a", "b"]
    assert sorted(i.series for i in alerts[1].items) == ["c", "d", "wall"]


def test_overlapping_steps_make_one_alert_on_the_revisions_they_share() -> None:
    alerts = group_items([_step("a", 5, 3, 6), _step("b", 6, 5, 8)], ORDER, WatchRule())
    assert [(a.first_revision, a.last_revision, a.good_revision) for a in alerts] == [("r05", "r06", "r04")]


def test_kinds_are_never_grouped_together_and_disjoint_steps_stay_apart() -> None:
    steps = [_step("a", 5, 5, 5), _step("b", 5, 5, 5, shift=-0.1), _step("c", 9, 9, 9)]
    alerts = group_items(steps, ORDER, WatchRule())
    assert [(a.kind, a.first_revision) for a in alerts] == [
        ("improvement", "r05"),
        ("regression", "r05"),
        ("regression", "r09"),
    ]


def test_a_range_of_steps_that_share_nothing_is_all_of_them() -> None:
    # Steps kept from an earlier alert may not share a revision with a new one: the alert then
    # names every revision any of them holds, never an empty range.
    first, last, good = alert_range([_step("a", 3, 2, 3), _step("b", 6, 5, 7)], ORDER)
    assert (first, last, good) == ("r02", "r07", "r01")


def _candidate(name: str, p: float, machine: str = "m", at: str = "r05") -> AlertItem:
    return AlertItem(
        series=name, fingerprint={"machine": machine}, metric="kernel_init_s", component=f"initcall {name}",
        revision=at, first_revision=at, last_revision=at, good_revision="r04", shift=0.01, p=p,
    )  # fmt: skip


def test_a_family_keeps_steps_by_benjamini_hochberg_over_its_series() -> None:
    family = family_key({"machine": "m"}, "kernel_init_s", "initcall x")
    assert family == family_key({"machine": "m"}, "kernel_init_s", "initcall y")
    # Twenty of 100 initcalls moved at p = 5e-4: each passes k * 0.01 / 100 (k = 20: 2e-3), where
    # alpha / 100 (1e-4) would keep none.
    many = [_candidate(f"c{i}", 5e-4) for i in range(20)]
    kept = family_steps(many, {family: 100}, 0.01)
    assert len(kept) == 20 and all(k.detail["family_p_max"] == 20 * 0.01 / 100 for k in kept)
    # One alone at 2e-4 does not pass 1 * 0.01 / 100; at 5e-5 it does.
    assert family_steps([_candidate("one", 2e-4)], {family: 100}, 0.01) == []
    (alone,) = family_steps([_candidate("one", 5e-5)], {family: 100}, 0.01)
    assert alone.detail == {"family_series": 100, "family_p_max": 1e-4}
    # Another machine is another family: its size and its steps count apart.
    other = family_key({"machine": "n"}, "kernel_init_s", "initcall x")
    kept = family_steps(
        [_candidate("one", 5e-5), _candidate("one", 5e-3, "n")], {family: 100, other: 2}, 0.01
    )
    assert sorted(k.fingerprint["machine"] for k in kept) == ["m", "n"]
    # A step alone at its revision is judged with that revision's steps only: the twenty at r05
    # do not lower the bar for one at r09.
    kept = family_steps([*many, _candidate("late", 5e-4, at="r09")], {family: 100}, 0.01)
    assert len(kept) == 20 and all(k.revision == "r05" for k in kept)

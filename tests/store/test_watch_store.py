"""Watched series on the real stores (SQLite and PostgreSQL): alerts found once, kept across
recomputations, triaged; a confirmed step restarts the baseline; fingerprints never mixed; the
watchdog. Values are planted through the store's own API (no QEMU): the numbers are known."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from bootscope.errors import InputError, StoreLookupError
from bootscope.store import Store
from bootscope.store.watch_series import load_series
from bootscope.usecases.watch.alerts import list_alerts, recompute, recompute_run, show_alert, triage_alert
from tests.usecases.watch.stored_series import HOST, store_revision

T0_S = 1.7e9
HOUR_S = 3600.0


def _series(
    store: Store, levels: list[float], *, seed: int, host: dict[str, object] | None = None, first: int = 0
) -> None:
    rng = np.random.default_rng(seed)
    for i, level in enumerate(levels):
        values = list(level + rng.normal(0.0, 0.004, 3))
        store_revision(
            store, f"r{first + i:03d}", values, time_s=T0_S + HOUR_S * (first + i), host=host or HOST
        )


def test_a_step_opens_one_alert_that_recomputing_keeps(store_target: str) -> None:
    with Store.open(store_target) as store:
        _series(store, [2.0] * 30 + [2.03] * 14, seed=1)
        first = recompute(store, now_s=T0_S + 44 * HOUR_S)
        assert len(first.opened) == 1 and first.updated == ()
        alert = first.alerts[0]
        assert alert.kind == "regression" and alert.state == "untriaged"
        assert alert.first_revision <= "r030" <= alert.last_revision
        assert alert.good_revision is not None and alert.good_revision < alert.first_revision
        (item,) = alert.items
        assert item.metric == "kernel_init_s" and item.shift == pytest.approx(0.03, abs=0.006)
        assert item.ci is not None and item.ci[0] < item.shift < item.ci[1]
        assert item.jitter_ratio is not None and item.jitter_ratio > 3
        again = recompute(store, now_s=T0_S + 44 * HOUR_S)
        assert again.opened == () and again.updated == ()
        # A later point changes the numbers of the same step: the alert is updated, not duplicated.
        _series(store, [2.03], seed=9, first=44)
        later = recompute(store, now_s=T0_S + 45 * HOUR_S)
        assert later.opened == () and len(later.alerts) == 1


def test_triage_is_kept_with_who_and_why_and_confirming_restarts_the_baseline(store_target: str) -> None:
    with Store.open(store_target) as store:
        _series(store, [2.0] * 30 + [2.03] * 30, seed=2)
        (alert_id,) = recompute(store, now_s=T0_S + 60 * HOUR_S).opened
    triaged = triage_alert(store_target, alert_id, "confirmed", "initcall_debug left on", "ana")
    assert triaged.state == "confirmed"
    assert [(e.by, e.state, e.note) for e in triaged.events][-1] == (
        "ana",
        "confirmed",
        "initcall_debug left on",
    )
    with Store.open(store_target) as store:
        # A second step after the confirmed one is judged against the new baseline (2.03), not 2.0.
        _series(store, [2.06] * 14, seed=3, first=60)
        update = recompute(store, now_s=T0_S + 74 * HOUR_S)
    assert len(update.opened) == 1
    new = show_alert(store_target, update.opened[0])
    assert new.items[0].before == pytest.approx(2.03, abs=0.005)
    assert new.items[0].shift == pytest.approx(0.03, abs=0.006)
    assert [a.id for a in list_alerts(store_target, "confirmed")] == [alert_id]


def test_an_invalid_alert_stays_invalid_when_found_again(store_target: str) -> None:
    with Store.open(store_target) as store:
        _series(store, [2.0] * 30 + [1.97] * 14, seed=4)
        (alert_id,) = recompute(store, now_s=T0_S + 44 * HOUR_S).opened
    assert show_alert(store_target, alert_id).kind == "improvement"
    triage_alert(store_target, alert_id, "invalid", "lab moved racks", "ops")
    with Store.open(store_target) as store:
        _series(store, [1.97] * 2, seed=5, first=44)
        update = recompute(store, now_s=T0_S + 46 * HOUR_S)
    assert update.opened == ()
    assert show_alert(store_target, alert_id).state == "invalid"


def test_two_machines_with_one_step_make_one_alert_and_never_share_a_series(store_target: str) -> None:
    other = {**HOST, "hostname": "lab2", "cpu_model": "Other CPU"}
    with Store.open(store_target) as store:
        _series(store, [2.0] * 30 + [2.04] * 14, seed=6)
        _series(store, [3.0] * 30 + [3.04] * 14, seed=7, host=other)
        update = recompute(store, now_s=T0_S + 44 * HOUR_S)
    assert len(update.series) == 2 and len(update.opened) == 1
    (alert,) = update.alerts
    machines = sorted(item.fingerprint["machine"] for item in alert.items)
    assert machines == ["lab1", "lab2"]
    # The two series' points were never pooled: each step is measured from its own level.
    assert sorted(round(item.before or 0.0, 1) for item in alert.items) == [2.0, 3.0]


def test_a_silent_series_raises_a_missing_alert(store_target: str) -> None:
    with Store.open(store_target) as store:
        _series(store, [2.0] * 20, seed=8)
        quiet = recompute(store, now_s=T0_S + 21 * HOUR_S)
        assert quiet.opened == ()
        silent = recompute(store, now_s=T0_S + 30 * HOUR_S)
    (alert,) = silent.alerts
    assert alert.kind == "missing" and alert.last_revision == "r019"
    assert alert.items[0].detail["cadence_s"] == pytest.approx(HOUR_S)


def test_triage_refuses_bad_input(store_target: str) -> None:
    with Store.open(store_target) as store:
        _series(store, [2.0] * 3, seed=9)
    with pytest.raises(InputError, match="--state must be one of"):
        triage_alert(store_target, 1, "closed", "", "me")
    with pytest.raises(StoreLookupError, match="no alert 7"):
        triage_alert(store_target, 7, "invalid", "", "me")


def test_adding_one_run_matches_a_full_recompute_and_counts_a_run_once(store_target: str) -> None:
    with Store.open(store_target) as store:
        _series(store, [2.0] * 30 + [2.03] * 5, seed=10)
        recompute(store, now_s=T0_S + 35 * HOUR_S)
        before = {s.key: s for s in load_series(store)}
        rng = np.random.default_rng(11)
        run = store_revision(store, "r035", list(2.03 + rng.normal(0, 0.004, 3)), time_s=T0_S + 35 * HOUR_S)
        one = recompute_run(store, run, now_s=T0_S + 36 * HOUR_S)
        twice = recompute_run(store, run, now_s=T0_S + 36 * HOUR_S)
        (key,) = before
        (added,) = load_series(store)
        assert [p.revision for p in added.points] == [p.revision for p in before[key].points] + ["r035"]
        assert twice.opened == () and twice.updated == ()
        full = recompute(store, now_s=T0_S + 36 * HOUR_S)
        assert full.opened == () and full.updated == ()  # the one-run update left what a full one finds
        (rebuilt,) = load_series(store)
        assert rebuilt.points == added.points
    assert len(one.alerts) == 1 and one.alerts[0].kind == "regression"


def test_a_schema_4_store_gets_the_series_component(tmp_path: Path) -> None:
    db = tmp_path / "four.db"
    with Store.open(db) as store:
        _series(store, [2.0] * 14, seed=12)
        recompute(store, now_s=T0_S + 14 * HOUR_S)
    with sqlite3.connect(db) as conn:  # what this bootscope wrote before series had a component
        conn.execute("ALTER TABLE watch_series DROP COLUMN component")
        conn.execute("UPDATE bootscope_meta SET value = '4' WHERE key = 'schema'")
    with Store.open(db) as store:
        (series,) = load_series(store)
        assert series.component == "total" and len(series.revisions) == 14
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM bootscope_meta WHERE key = 'schema'").fetchone() == ("5",)

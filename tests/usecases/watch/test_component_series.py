"""`bootscope watch --by initcall`: a series per initcall, judged as one family per machine.

Revisions of synthetic boots of a real ``initcall_debug`` log (``tests/planted_logs.py``: every
silence and initcall scaled by 2 % seeded noise): from revision 20 on, one initcall is 40 ms slower.
The expected series and the planted step are read off the boots' text by a plain regex reader here,
not by bootscope's parser.
"""

from __future__ import annotations

import re
import shutil
import statistics
import time
from pathlib import Path

import pytest

from bootscope.store import Store
from bootscope.store.watch_series import TOTAL, load_series
from tests.cli_here import run_in_process, run_json
from tests.usecases.watch.stored_series import store_planted_revision

DATA = Path(__file__).resolve().parents[2] / "data"
SOURCE = DATA / "debian-6.1-cloud-initcall-smp1.log"
T0_S = time.time() - 30.5 * 3600.0  # the last revision 1.5 h ago: the watchdog (3 h here) stays quiet
RETURNED = re.compile(r"initcall ([\w.]+)\+\S+ returned -?\d+ after (\d+) usecs")
REVISIONS, PLANTED_AT, BOOTS = 30, 20, 2
SLOWER = {"init_kprobe_trace": 40_000}


def _plain_initcalls(text: str) -> dict[str, float]:
    """initcall name -> seconds, summed over its lines, read with one regex."""
    found: dict[str, float] = {}
    for name, usecs in RETURNED.findall(text):
        found[name] = found.get(name, 0.0) + int(usecs) / 1e6
    return found


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, set[str]]:
    """The store, and the initcalls whose median reached 1 ms at some revision (plain reader)."""
    from tests.planted_logs import planted_boot

    db = str(tmp_path_factory.mktemp("components") / "watch.db")
    lines = SOURCE.read_text(encoding="utf-8").splitlines()
    expected: set[str] = set()
    with Store.open(db) as store:
        for i in range(REVISIONS):
            slower = SLOWER if i >= PLANTED_AT else None
            store_planted_revision(
                store, f"v{i:02d}", lines, BOOTS, seed=i + 1, time_s=T0_S + 3600.0 * i, slower_us=slower
            )
            # The same boots again, as store_planted_revision makes them (seed * 100 + index).
            boots = [
                _plain_initcalls(planted_boot(lines, (i + 1) * 100 + b, slower_us=slower))
                for b in range(BOOTS)
            ]
            for name in boots[0]:
                if statistics.median(boot.get(name, 0.0) for boot in boots) >= 0.001:
                    expected.add(name)
    return db, expected


RULE = ("--alpha", "0.01", "--back", "20", "--fore", "10", "--min-back", "8", "--min-fore", "4")


def test_every_initcall_over_a_millisecond_is_a_series_and_only_the_planted_one_moves(
    planted: tuple[str, set[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    db, expected = planted
    watched = run_json(capsys, "watch", "--db", db, "--by", "initcall", *RULE)
    with Store.open(db) as store:
        kept = {s.component for s in load_series(store) if s.component != TOTAL}
    assert kept == {f"initcall {name}" for name in expected}
    assert 20 < len(expected) < 200, len(expected)  # the floor leaves most of the 572 out

    (alert,) = [a for a in watched["alerts"] if a["kind"] == "regression"]
    assert alert["first_revision"] <= f"v{PLANTED_AT:02d}" <= alert["last_revision"]
    moved = {i["component"]: i for i in alert["items"] if i["component"] != TOTAL}
    assert set(moved) == {"initcall init_kprobe_trace"}, sorted(moved)
    step = moved["initcall init_kprobe_trace"]
    assert step["shift"] == pytest.approx(0.040, abs=0.004)
    # One family: every initcall series of this machine; one step moved, so Benjamini-Hochberg's
    # threshold for it is Bonferroni's, alpha / the family's size.
    assert step["detail"]["family_series"] == len(expected)
    assert step["detail"]["family_p_max"] == pytest.approx(0.01 / len(expected))
    assert step["p"] <= 0.01 / len(expected)
    # No other alert: 2 % noise on ~100 initcalls over 30 revisions raises nothing.
    assert [a["kind"] for a in watched["alerts"]] == ["regression"], watched["alerts"]
    # The text: the total first, then the initcall, and the family's rule said.
    capsys.readouterr()
    assert run_in_process("alert", str(alert["id"]), "--db", db) == 0
    out = capsys.readouterr().out
    rows = [" ".join(line.strip("│ ").split(" │ ")) for line in out.splitlines() if line.startswith("│")]
    assert [row.split()[:2] for row in rows] == [
        ["kernel_init_s", "total"],
        ["kernel_init_s", "initcall"],
    ], out
    assert "init_kprobe_trace" in rows[1], out
    assert all(len(line) <= 80 for line in out.splitlines()), out
    text = " ".join(out.split())
    assert "components of one kind on one machine: Benjamini-Hochberg at alpha over their series" in text


def _own_copy(db: str, tmp_path: Path) -> str:
    """A copy of the shared store for a test that writes to it (tests run in random order)."""
    copy = tmp_path / "watch.db"
    shutil.copyfile(db, copy)
    return str(copy)


def test_one_more_revision_goes_on_in_the_kept_series_only(
    planted: tuple[str, set[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, expected = planted
    db = _own_copy(db, tmp_path)
    run_json(capsys, "watch", "--db", db, "--by", "initcall", *RULE)
    lines = SOURCE.read_text(encoding="utf-8").splitlines()
    with Store.open(db) as store:
        store_planted_revision(store, "v99", lines, BOOTS, seed=99, time_s=T0_S + 3600.0 * 31)
    run_json(capsys, "watch", "--run", "latest", "--db", db, *RULE)
    with Store.open(db) as store:
        series = {s.component: s.revisions for s in load_series(store)}
    assert {c for c in series if c != TOTAL} == {f"initcall {name}" for name in expected}
    assert all(revisions[-1] == "v99" for revisions in series.values())


def test_only_a_total_series_that_stops_raises_a_missing_alert(
    planted: tuple[str, set[str]], tmp_path: Path
) -> None:
    """A day after the last revision every series is silent; only the total is a machine that
    stopped reporting (an initcall a newer kernel lacks is silent too, and is not one)."""
    from bootscope.stats.series_watch import WatchRule
    from bootscope.usecases.watch.alerts import recompute

    db = _own_copy(planted[0], tmp_path)
    with Store.open(db) as store:
        update = recompute(
            store,
            WatchRule(alpha=0.01, back_points=20, fore_points=10),
            now_s=T0_S + 3600.0 * 60,
            by=["initcall"],
        )
    missing = [a for a in update.alerts if a.kind == "missing"]
    assert [[i.component for i in a.items] for a in missing] == [[TOTAL]]

"""The WIDTH of `fleet summary`'s intervals, through the real import, store, Parquet and DuckDB.

SYNTHETIC fleet: 200 two-line logs (a banner and `Run /init as init process`) whose kernel_init_s are
exactly 1.000, 1.001, ..., 1.199 s, so the value of rank r is 1.000 + (r - 1) / 1000 s; 3 logs cut
before init (incomplete) in the same group, and 5 boots that panicked in another. Each interval's ends
must be the values at the equal-tailed binomial ranks that tests/fleet_logs.py enumerates, and each
failure rate's interval the closed form of Clopper-Pearson at k = 0 and k = n: an interval that
spans the whole sample (always covering, saying nothing) fails here.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from cli_here import run_json
from fleet_logs import equal_tailed_ranks

N_OK = 200
N_CUT = 3
N_PANICKED = 5
BANNER = "[    0.000000] Linux version 6.1.0-test (builder@example) (gcc 12.2.0) #1 SMP\n"


def _value_at_rank_s(rank: int) -> float:
    return 1.0 + (rank - 1) / 1000


def _write_fleet(root: Path) -> tuple[Path, Path]:
    fleet = root / "fleet"
    fleet.mkdir()
    rows = ["file,group"]
    names = [f"ok-{i:03d}.log" for i in range(N_OK)]
    random.Random(25).shuffle(names)  # file order is not value order
    for i, name in enumerate(names):
        (fleet / name).write_text(f"{BANNER}[{1 + i / 1000:12.6f}] Run /init as init process\n")
        rows.append(f"{name},steady")
    for i in range(N_CUT):
        (fleet / f"cut-{i}.log").write_text(
            f"{BANNER}[    0.{i + 1:06d}] Memory: 500000K/524288K available\n"
        )
        rows.append(f"cut-{i}.log,steady")
    for i in range(N_PANICKED):
        (fleet / f"panic-{i}.log").write_text(
            f"{BANNER}[    0.{i + 1:06d}] Kernel panic - not syncing: VFS: Unable to mount root fs\n"
        )
        rows.append(f"panic-{i}.log,broken")
    meta = root / "hosts.csv"
    meta.write_text("\n".join(rows) + "\n")
    return fleet, meta


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    return run_json(capsys, *args)


def test_the_enumerated_ranks_are_the_textbook_ones() -> None:
    # The oracle itself: the 95 % interval of the median of 100 is X_(40)..X_(61), of 20 X_(6)..X_(15)
    # (Conover's binomial-quantile interval; the sign-test table).
    assert equal_tailed_ranks(100, 0.5, 0.95) == (40, 61)
    assert equal_tailed_ranks(20, 0.5, 0.95) == (6, 15)


def test_fleet_percentile_intervals_end_at_the_binomial_ranks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet, meta = _write_fleet(tmp_path)
    db = str(tmp_path / "w.db")
    imported = _json(capsys, "fleet", "import", str(fleet), "--meta", str(meta), "--db", db, "-j", "1")
    assert imported["imported"] == N_OK + N_CUT + N_PANICKED and not imported["bad"]
    summary = _json(capsys, "fleet", "summary", "--by", "group", "--db", db)
    groups = {g["group"]: g for g in summary["groups"]}  # type: ignore[attr-defined]
    steady = groups["steady"]
    assert steady["n"] == N_OK and steady["incomplete"] == N_CUT

    for p, key in ((0.5, "p50"), (0.9, "p90"), (0.99, "p99")):
        rank = -(-round(p * 1000) * N_OK // 1000)  # ceil(p * n), in integers
        assert steady[key] == pytest.approx(_value_at_rank_s(rank), abs=1e-9), key
        low, high = equal_tailed_ranks(N_OK, p, 0.95)
        got_low, got_high = steady[f"{key}_ci"]
        assert got_low == pytest.approx(_value_at_rank_s(low), abs=1e-9), key
        if high > N_OK:  # no sample value bounds the quantile from above
            assert got_high is None, key
        else:
            assert got_high == pytest.approx(_value_at_rank_s(high), abs=1e-9), key
    # The ranks, as a reader of the table would check them: the median's interval is X_(86)..X_(115),
    # 30 ranks of 200 (0.029 s of the 0.199 s the sample spans); p99 has no upper end at n = 200.
    assert steady["p50_ci"] == pytest.approx([1.085, 1.114], abs=1e-9)
    assert steady["p90_ci"] == pytest.approx([1.170, 1.188], abs=1e-9)
    assert steady["p99_ci"][0] == pytest.approx(1.194, abs=1e-9) and steady["p99_ci"][1] is None


def test_fleet_failure_rate_intervals_have_the_closed_form_widths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet, meta = _write_fleet(tmp_path)
    db = str(tmp_path / "r.db")
    _json(capsys, "fleet", "import", str(fleet), "--meta", str(meta), "--db", db, "-j", "1")
    summary = _json(capsys, "fleet", "summary", "--by", "group", "--db", db)
    groups = {g["group"]: g for g in summary["groups"]}  # type: ignore[attr-defined]
    # 0 failed of the 200 decided boots (the 3 cut ones decide nothing): [0, 1 - (alpha/2)^(1/n)]
    steady = groups["steady"]
    assert steady["failed"] == 0 and steady["failed_rate"] == 0.0
    assert steady["failed_ci"] == pytest.approx([0.0, 1 - 0.025 ** (1 / N_OK)], rel=1e-9, abs=1e-12)
    assert steady["failed_ci"][1] == pytest.approx(0.018275, abs=1e-6)  # about 3.7 / n, not 1
    # 5 failed of 5: [(alpha/2)^(1/n), 1]
    broken = groups["broken"]
    assert (broken["failed"], broken["n"], broken["p50"]) == (N_PANICKED, 0, None)
    assert broken["failed_ci"] == pytest.approx([0.025 ** (1 / N_PANICKED), 1.0], rel=1e-9)

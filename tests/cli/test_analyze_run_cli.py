"""`bootscope analyze --run ID --boot K` on boots stored the way `bootscope run` stores them: the
host-side metrics come from the stored QEMU start, and a `quiet` console still yields what it can."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from bootscope.lab.plans.boot import VariantSpec
from bootscope.model import LogLine
from bootscope.store import BootRecord, Store, VariantRecord

START_NS = 7_000_000_000


def _store_boot(db: Path, lines: list[LogLine], reason: str = "") -> None:
    with Store.open(db) as store:
        experiment = store.create_experiment(
            plan={}, seed=1, accel="tcg", accel_reason="test", host={},
            variants=[VariantRecord("q", VariantSpec("q", "k").config())],
        )  # fmt: skip
        # A superseded (disturbed, re-run) first attempt with a different start: it must not be used.
        for attempt, start_ns in ((0, START_NS - 5 * 10**9), (1, START_NS)):
            record = BootRecord(
                "q", 1, False, "ok", reason=reason, host_start_ns=start_ns, attempt=attempt,
                superseded=attempt == 0, disturbed=attempt == 0,
            )  # fmt: skip
            store.record_boot(experiment.id, record, lines)


def _analyze_json(db: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object], str]:
    from bootscope.cli import main

    saved = sys.argv
    sys.argv = ["bootscope", "analyze", "--run", "latest", "--boot", "1", "--json", "--db", str(db)]
    code = 0
    try:
        main()
    except SystemExit as exit_:
        code = int(exit_.code or 0)
    finally:
        sys.argv = saved
    captured = capsys.readouterr()
    document = json.loads(captured.out) if code == 0 else {}
    return code, document, captured.err


def test_quiet_console_shows_what_can_be_measured(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The whole console of a real `bootscope run debian:cloud --append quiet` boot here: firmware, then
    # the marker after the firmware's terminal reset on the same line; no timed kernel line at all.
    lines = [
        LogLine(
            "\x1bc\x1b[?7l\x1b[2J\x1b[0mSeaBIOS (version 1.16.2-debian-1.16.2-1)", host_ns=START_NS + 10**8
        ),
        LogLine(
            "Booting from ROM..\x1bc\x1b[?7l\x1b[2JBOOTSCOPE-MARKER init uptime=1.88",
            host_ns=START_NS + 2_345_000_000,
        ),
    ]
    db = tmp_path / "quiet.db"
    _store_boot(db, lines)
    code, document, err = _analyze_json(db, capsys)
    assert code == 0, err
    (boot,) = document["boots"]  # type: ignore[attr-defined]
    metrics = boot["metrics"]
    assert metrics["userspace_s"] == 1.88
    assert metrics["host_wall_s"] == pytest.approx(2.345)  # from the final attempt's QEMU start
    assert metrics["kernel_init_s"] is None
    assert "no timed kernel line" in err


def test_timed_console_gets_the_host_side_metrics(
    tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    texts = (data_dir / "debian-6.1-cloud-smp2.log").read_text(errors="replace").split("\n")
    # As boot_once captures: one line per newline, here 2 ms of host time apart.
    lines = [LogLine(text, host_ns=START_NS + 2_000_000 * (i + 1)) for i, text in enumerate(texts)]
    db = tmp_path / "timed.db"
    _store_boot(db, lines)
    code, document, err = _analyze_json(db, capsys)
    assert code == 0, err
    metrics = document["boots"][0]["metrics"]  # type: ignore[index]
    # The first kernel line shares its console line with firmware output and a terminal reset.
    first_timed = next(i for i, t in enumerate(texts) if re.search(r"\[\s*\d+\.\d+\] Linux version", t))
    assert first_timed == 2
    marker = next(i for i, t in enumerate(texts) if "BOOTSCOPE-MARKER" in t)
    assert metrics["host_kernel_start_s"] == pytest.approx(2e-3 * (first_timed + 1))
    assert metrics["host_wall_s"] == pytest.approx(2e-3 * (marker + 1))
    init = next(t for t in texts if "Run /init as init process" in t)
    assert metrics["kernel_init_s"] == float(re.findall(r"\d+\.\d+", init)[0])


def test_missing_boot_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "one.db"
    _store_boot(db, [LogLine("BOOTSCOPE-MARKER init uptime=1.0", host_ns=START_NS + 1)])
    from bootscope.cli import main

    saved = sys.argv
    sys.argv = ["bootscope", "analyze", "--run", "1", "--boot", "2", "--db", str(db)]
    try:
        with pytest.raises(SystemExit) as exit_:
            main()
    finally:
        sys.argv = saved
    assert exit_.value.code == 2  # a boot that is not there: bad input, not a failed store
    assert capsys.readouterr().err.strip() == f"bootscope: error: {db}: experiment 1 has no boot 2"

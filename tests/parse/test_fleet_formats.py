"""Device-farm formats of `fleet import`: LAVA job logs (output.yaml) and KCIDB v5 documents.

Fixtures: tests/data/fleet/ (hand-written in the documented formats around real console lines; see
tests/data/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bootscope.errors import ParseError
from bootscope.parse.kcidb import looks_like_kcidb, outcome_of, read_kcidb
from bootscope.parse.lava import lava_console, looks_like_lava
from bootscope.usecases.fleet.logfile import read_fleet_file

FLEET = Path(__file__).resolve().parents[1] / "data" / "fleet"


def test_lava_console_keeps_target_lines_with_dispatcher_stamps() -> None:
    lines = (FLEET / "lava-qemu-smp2-output.yaml").read_text().splitlines()
    assert looks_like_lava(lines[:5])
    console = list(lava_console(lines))
    assert console[0].text.startswith("SeaBIOS")
    assert all(line.host_ns is not None for line in console)
    assert not any(line.text.startswith("start: ") for line in console)  # info lines are LAVA's own
    # 2024-05-02T10:00:00.55 UTC, the first target line
    assert console[0].host_ns == (1714644000 * 1000 + 550) * 1_000_000


def test_lava_boot_metrics_use_host_stamps() -> None:
    result = read_fleet_file(str(FLEET / "lava-qemu-smp2-output.yaml"))
    assert result.format == "lava" and result.error is None and len(result.boots) == 1
    metrics = result.boots[0].metrics
    assert metrics["kernel_init_s"] == pytest.approx(3.194636)  # the console's own printk time
    # first target line at 10:00:00.55, first kernel line at 10:00:01.402 (the dispatcher's clock)
    assert metrics["host_kernel_start_s"] == pytest.approx(0.852, abs=1e-6)


def test_lava_hostile_lines_cost_only_themselves() -> None:
    lines = [
        '- {"dt": "2024-05-02T10:00:00.000000", "lvl": "target", '
        '"msg": ["[    0.000000] Linux version 6.1", "x"]}',
        '- {"dt": "2024-05-02T10:00:0',  # cut mid-write
        "- " + "\x00\xff" * 1000,
        '- {"dt": "not a time", "lvl": "target", "msg": "[    1.000000] Run /init as init process"}',
        '- {"dt": "2024-05-02T10:00:02", "lvl": "target", "msg": 42}',
    ]
    console = list(lava_console(lines))
    assert [line.text for line in console] == [
        "[    0.000000] Linux version 6.1",
        "x",
        "[    1.000000] Run /init as init process",
    ]
    assert console[2].host_ns is None
    with pytest.raises(ParseError, match="no LAVA"):
        list(lava_console(["plain text", "- not json"]))


def test_kcidb_boots_and_outcomes() -> None:
    document = json.loads((FLEET / "kcidb-v5-boots.json").read_text())
    assert looks_like_kcidb((FLEET / "kcidb-v5-boots.json").read_text()[:2000])
    boots = read_kcidb(document)
    assert [b.test_id for b in boots] == [
        "lab_a:boot-1001",
        "lab_a:boot-1002",
        "lab_a:boot-1003",
        "lab_a:boot-1004",
    ]
    assert boots[0].numbers == {"kernel_init_s": 3.194636, "userspace_s": 3.28}
    assert boots[0].meta["platform"] == "qemu-x86" and boots[0].meta["kernel"] == "v6.1.192"
    assert boots[1].meta["arch"] == "arm64" and "Run /init" in boots[1].log_excerpt
    assert [outcome_of(b.status) for b in boots] == ["ok", "ok", "failed", "not-run"]


def test_kcidb_rejects_other_documents() -> None:
    with pytest.raises(ParseError, match="v5"):
        read_kcidb({"version": {"major": 4}, "tests": []})
    with pytest.raises(ParseError, match="no boot test"):
        read_kcidb({"version": {"major": 5}, "tests": [{"id": "a:1", "path": "ltp"}]})
    with pytest.raises(ParseError, match="not a list"):
        read_kcidb({"version": {"major": 5}, "tests": {}})
    journal = '{"__CURSOR": "s=1", "MESSAGE": "x", "__MONOTONIC_TIMESTAMP": "1"}'
    assert not looks_like_kcidb(journal)

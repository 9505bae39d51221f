"""A whole boot's journal, as a user pastes it: `journalctl -b -o short-monotonic` and the default
`journalctl -b`, both read over SSH from one boot of the test image (tests/data/README.md). The
guest's own `systemd-analyze time` said 6.386 s (kernel) + 19.718 s (userspace) = 26.105 s."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_here import run_in_process

from bootscope.analyze.breakdown import analyze_columns
from bootscope.parse import scan_boots
from bootscope.sources.files import BLOCK_BYTES, read_text_lines

MONOTONIC = "debian-12-image-journal-b-short-monotonic.log"
WALL = "debian-12-image-journal-b-short.log"
# The lines, read by hand in the monotonic file: "Run /init as init process" at 3.026892, systemd's
# "running in system mode" at 6.665062, "Startup finished in ..." at 26.068128.
RUN_INIT_S, SYSTEMD_START_S, FINISHED_S = 3.026892, 6.665062, 26.068128


def _one_boot(path: Path):  # type: ignore[no-untyped-def]
    stream = scan_boots(read_text_lines(str(path)).blocks(BLOCK_BYTES))
    boots = [analyze_columns(columns) for columns in stream]
    assert len(boots) == 1, [b.identity.release for b in boots]
    return stream, boots[0]


def test_short_monotonic_puts_userspace_beside_the_kernel(data_dir: Path) -> None:
    stream, boot = _one_boot(data_dir / MONOTONIC)
    assert stream.format == "journal"
    assert boot.identity.release == "6.1.0-50-cloud-amd64"
    metrics = boot.metrics
    assert metrics.kernel_init_s == pytest.approx(RUN_INIT_S)
    assert metrics.initrd_s == pytest.approx(SYSTEMD_START_S - RUN_INIT_S)
    assert metrics.systemd_userspace_s == pytest.approx(FINISHED_S - SYSTEMD_START_S)
    stated = boot.systemd_stated
    assert stated is not None and stated.finished
    assert (stated.kernel_s, stated.userspace_s, stated.total_s) == (6.386, 19.718, 26.105)
    assert stated.initrd_s is None and stated.firmware_s is None
    # systemd counts userspace from a stamp it takes before its first line: its figure is a little
    # longer, never shorter, and the two agree well within the warning's bound.
    assert 0.0 < stated.userspace_s - metrics.systemd_userspace_s < 1.0
    assert not any("systemd itself says" in w for w in boot.warnings)


def test_wall_clock_journal_keeps_systemds_own_figures_and_warns(data_dir: Path) -> None:
    stream, boot = _one_boot(data_dir / WALL)
    assert stream.format == "syslog"
    assert any("about 1 s" in w for w in stream.warnings)
    # journald re-stamped the early kernel lines: whole seconds, and not the boot's clock.
    assert boot.metrics.systemd_userspace_s is not None
    assert float(boot.metrics.systemd_userspace_s).is_integer()
    stated = boot.systemd_stated
    assert stated is not None and stated.userspace_s == 19.718 and stated.kernel_s == 6.386
    (warning,) = [w for w in boot.warnings if "systemd itself says 19.718 s" in w]
    assert "short-monotonic" in warning


def test_analyze_prints_systemds_own_line_and_json_keeps_it(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_in_process("analyze", str(data_dir / WALL)) == 0
    out = " ".join(capsys.readouterr().out.split())  # rich wraps at 80 columns
    assert "(systemd's own: 6.386 s (kernel) + 19.718 s (userspace) = 26.105 s)" in out
    done = subprocess.run(
        [sys.executable, "-m", "bootscope", "analyze", str(data_dir / MONOTONIC), "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    (boot,) = json.loads(done.stdout)["boots"]
    assert boot["systemd_stated"] == {
        "firmware_s": None,
        "loader_s": None,
        "kernel_s": 6.386,
        "initrd_s": None,
        "userspace_s": 19.718,
        "total_s": 26.105,
    }
    assert boot["metrics"]["systemd_userspace_s"] == pytest.approx(FINISHED_S - SYSTEMD_START_S)


def test_a_stated_line_alone_is_still_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # An excerpt pasted into a forum: `journalctl -x` with its catalog text, and no line of the start
    # (a 2018 Ubuntu laptop's boot: firmware and loader too, minutes in userspace).
    log = tmp_path / "excerpt.log"
    log.write_text(
        "Jul 25 14:03:27 ThisOne kernel: Linux version 4.15.0-29-lowlatency (buildd@lgw01-amd64-024)\n"
        "Jul 25 14:03:28 ThisOne systemd[1]: Startup finished in 5.899s (firmware) + 3.411s (loader)"
        " + 6.801s (kernel) + 3min 1.770s (userspace) = 3min 17.882s.\n"
        "-- Subject: System start-up is now complete\n"
        "-- Defined-By: systemd\n"
        "-- \n"
        "-- Kernel start-up required 6801325 microseconds.\n"
    )
    assert run_in_process("analyze", str(log)) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "systemd: no start line in this log" in out
    stated = "5.899 s (firmware) + 3.411 s (loader) + 6.801 s (kernel) + 181.770 s (userspace) = 197.882 s"
    assert stated in out

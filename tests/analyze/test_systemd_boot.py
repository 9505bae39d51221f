"""A real full userspace boot (tests/data/debian-12-image-systemd-tcg.tsv: the default image booted by
`bootscope run --image`): the systemd milestones, the login prompt and the collector's accounting."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from captures import load_chain_capture

from bootscope import defaults
from bootscope.analyze.captured import analyze_captured


def test_milestones_and_accounting_of_a_real_image_boot(data_dir: Path) -> None:
    boot = load_chain_capture(data_dir / "debian-12-image-systemd-tcg.tsv")
    analysis = analyze_captured(
        boot.lines, host_start_ns=boot.host_start_ns, marker_regex=defaults.LOGIN_PROMPT
    )
    metrics = analysis.breakdown.metrics
    assert metrics.kernel_init_s == pytest.approx(4.037184)
    assert metrics.initrd_s == pytest.approx(5.20251, abs=1e-6)
    assert metrics.systemd_userspace_s == pytest.approx(24.194866, abs=1e-6)
    assert metrics.login_prompt_s == pytest.approx(35.567076651) == metrics.host_wall_s
    systemd = analysis.systemd
    assert systemd is not None and systemd.complete and systemd.state == "running" and systemd.failed == ()
    assert systemd.time is not None and systemd.time.finished
    assert systemd.time.kernel_s == pytest.approx(8.741) and systemd.time.userspace_s == pytest.approx(24.629)
    # systemd logs its start line about half a second (TCG) after it takes its userspace timestamp.
    assert metrics.kernel_init_s + metrics.initrd_s - systemd.time.kernel_s == pytest.approx(0.5, abs=0.1)
    assert len(systemd.units) == 76 and len(systemd.blame) == 31 and systemd.critical_chain


def test_a_collector_cut_short_is_incomplete_and_not_finished_is_not_a_number(data_dir: Path) -> None:
    boot = load_chain_capture(data_dir / "debian-12-image-systemd-tcg.tsv")
    lines = list(boot.lines)
    end = next(i for i, line in enumerate(lines) if line.text == defaults.COLLECT_END)
    cut = analyze_captured(lines[:end], host_start_ns=boot.host_start_ns).systemd
    assert cut is not None and not cut.complete
    start = next(i for i, line in enumerate(lines) if line.text.startswith("Startup finished in"))
    lines[start] = replace(
        lines[start], text="Bootup is not yet finished (org.freedesktop.systemd1.Manager.Fini"
    )
    unfinished = analyze_captured(lines, host_start_ns=boot.host_start_ns).systemd
    assert unfinished is not None and unfinished.time is not None and not unfinished.time.finished
    assert unfinished.time.userspace_s is None and unfinished.time.total_s is None


def test_analyze_of_the_console_as_a_file_reports_userspace(data_dir: Path, tmp_path: Path) -> None:
    # The same console saved as a plain log (no host stamps): `bootscope analyze FILE` puts the
    # initramfs and systemd beside the kernel, on the printk clock, as the stored-boot analysis does.
    boot = load_chain_capture(data_dir / "debian-12-image-systemd-tcg.tsv")
    log = tmp_path / "console.log"
    log.write_text("".join(line.text + "\n" for line in boot.lines), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "bootscope", "analyze", str(log), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    (analyzed,) = json.loads(done.stdout)["boots"]
    metrics = analyzed["metrics"]
    # Read off the lines by hand: Run /init at 4.037184, systemd 252 starts at 9.239694, "Startup
    # finished" at 33.434560.
    assert metrics["initrd_s"] == pytest.approx(9.239694 - 4.037184, abs=1e-6)
    assert metrics["systemd_userspace_s"] == pytest.approx(33.434560 - 9.239694, abs=1e-6)
    assert metrics["login_prompt_s"] is None  # a host time: a plain file has none
    assert analyzed["milestones"]["systemd_start"] == pytest.approx(9.239694)
    text = subprocess.run(
        [sys.executable, "-m", "bootscope", "analyze", str(log)], capture_output=True, text=True, timeout=120
    )
    assert "userspace: initrd 5.203 s, systemd 24.195 s to Startup finished" in " ".join(text.stdout.split())

"""`bootscope analyze FILE` on systemd-analyze output: the real collector capture, and the same kind
of text pasted from a terminal (prompts around it, mixed units, escaped names, an initrd phase, a
list cut short)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PASTED = """\
user@host:~$ systemd-analyze time
Startup finished in 2.146s (kernel) + 1.845s (initrd) + 1min 3.044s (userspace) = 1min 7.035s
graphical.target reached after 1min 2.990s in userspace.
user@host:~$ systemd-analyze blame | head -4
1min 1.120s plymouth-quit-wait.service
     820ms systemd-fsck@dev-disk-by\\x2duuid-1234.service
     356us sys-kernel-config.mount
user@host:~$ systemd-analyze critical-chain
The time when unit became active or started is printed after the "@" character.
The time the unit took to start is printed after the "+" character.

graphical.target @1min 2.990s
└─multi-user.target @1min 2.989s
  └─plymouth-quit-wait.service @1.869s +1min 1.120s
user@host:~$ exit
"""


def _analyze(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bootscope", "analyze", *args], capture_output=True, text=True, timeout=120
    )


def test_real_collector_output_one_summary_line(data_dir: Path) -> None:
    done = _analyze(str(data_dir / "systemd-252-collector-tcg.txt"), "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["format"] == "systemd-analyze" and doc["finished"] is True
    assert doc["phases_s"]["kernel"] == pytest.approx(22.076) and doc["phases_s"][
        "userspace"
    ] == pytest.approx(56.055)
    assert doc["total_s"] == pytest.approx(78.131) and doc["target"] == "graphical.target"
    assert len(doc["blame"]) == 31 and doc["blame"][1] == {"unit": "e2scrub_reap.service", "took_s": 26.079}
    assert doc["critical_chain"][2]["unit"] == "systemd-logind.service"
    assert doc["summary"].startswith("kernel 22.076 s + userspace 56.055 s = 78.131 s")


def test_pasted_terminal_text_with_mixed_units(tmp_path: Path) -> None:
    pasted = tmp_path / "pasted.txt"
    pasted.write_text(PASTED, encoding="utf-8")
    done = _analyze(str(pasted), "--format", "json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["phases_s"] == {
        "firmware": None, "loader": None, "kernel": 2.146, "initrd": 1.845, "userspace": pytest.approx(63.044)
    }  # fmt: skip
    assert doc["total_s"] == pytest.approx(67.035) and doc["target_reached_s"] == pytest.approx(62.99)
    assert [row["unit"] for row in doc["blame"]] == [
        "plymouth-quit-wait.service",
        "systemd-fsck@dev-disk-by\\x2duuid-1234.service",
        "sys-kernel-config.mount",
    ]
    assert [row["took_s"] for row in doc["blame"]] == pytest.approx([61.12, 0.82, 356e-6])
    assert doc["critical_chain"][2]["took_s"] == pytest.approx(61.12)
    table = _analyze(str(pasted))
    assert table.returncode == 0, table.stderr
    summary = " ".join(table.stdout.split())
    assert "kernel 2.146 s + initrd 1.845 s + userspace 63.044 s = 67.035 s" in summary
    assert "longest unit plymouth-quit-wait.service 61.120 s (of 3 listed)" in summary


def test_not_finished_is_said_and_plain_text_is_still_untimed(tmp_path: Path) -> None:
    waiting = tmp_path / "waiting.txt"
    waiting.write_text(
        "$ systemd-analyze\n"
        "Bootup is not yet finished (org.freedesktop.systemd1.Manager.FinishTimestampMonotonic=0).\n"
    )
    done = _analyze(str(waiting))
    assert done.returncode == 0 and "boot not finished" in done.stdout
    plain = tmp_path / "plain.txt"
    plain.write_text("hello\nno times here\n")
    assert _analyze(str(plain)).returncode == 5

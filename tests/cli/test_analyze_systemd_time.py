"""`systemd-analyze time`'s one line, piped (`systemd-analyze time | bootscope analyze -`) or in a file.

The lines are real outputs quoted in public sources (firmware and loader parts, an initrd, minutes):
- LISA: microsoft/lisa, lisa/tools/systemd_analyze.py (the comments above BOOT_TIME_PATTERN quote four
  outputs of Azure VMs);
- hbs18/URS-Dokumentacija, novo.md (an Arch Linux VM, 22.4.2022, with its "graphical.target reached"
  line and a trailing space after the total);
- asalamon74/commandlineblog, _posts/2015-12-29-systemd-analyze.md.
The expected seconds are read off the lines by hand (1min 2.764s = 62.764 s).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CASES = [
    (
        "Startup finished in 4.160s (firmware) + 2.796s (loader) + 5.831s (kernel) + 18.885s (userspace)"
        " = 31.673s\n",
        {"firmware": 4.160, "loader": 2.796, "kernel": 5.831, "initrd": None, "userspace": 18.885},
        31.673,
    ),
    (
        "Startup finished in 2.020ms (kernel) + 8.866s (initrd) + 14.894s (userspace) = 25.782s\n",
        {"firmware": None, "loader": None, "kernel": 0.00202, "initrd": 8.866, "userspace": 14.894},
        25.782,
    ),
    (
        "Startup finished in 4.797s (kernel) + 57.966s (userspace) = 1min 2.764s\n",
        {"firmware": None, "loader": None, "kernel": 4.797, "initrd": None, "userspace": 57.966},
        62.764,
    ),
    (
        "Startup finished in 1.491s (kernel) + 1min 5.947s (userspace) = 1min 7.439s \n"
        "graphical.target reached after 1min 5.569s in userspace\n",
        {"firmware": None, "loader": None, "kernel": 1.491, "initrd": None, "userspace": 65.947},
        67.439,
    ),
    (
        "Startup finished in 6.697s (kernel) + 20.050s (userspace) = 26.748s\n",
        {"firmware": None, "loader": None, "kernel": 6.697, "initrd": None, "userspace": 20.050},
        26.748,
    ),
]


def _analyze(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bootscope", "analyze", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(("text", "phases_s", "total_s"), CASES)
def test_time_line_from_stdin(text: str, phases_s: dict[str, float | None], total_s: float) -> None:
    done = _analyze("-", "--format", "json", stdin=text)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["log"] == "-" and document["format"] == "systemd-analyze"
    assert document["phases_s"] == pytest.approx(phases_s)
    assert document["total_s"] == pytest.approx(total_s)


def test_time_line_from_a_file_and_the_table_from_stdin(tmp_path: Path) -> None:
    text, _phases, _total = CASES[3]
    path = tmp_path / "time.txt"
    path.write_text(text, encoding="utf-8")
    from_file = _analyze(str(path), "--format", "json")
    assert from_file.returncode == 0, from_file.stderr
    assert json.loads(from_file.stdout)["target_reached_s"] == pytest.approx(65.569)
    table = _analyze("-", stdin=text)
    assert table.returncode == 0, table.stderr
    assert "kernel 1.491 s + userspace 65.947 s = 67.439 s" in " ".join(table.stdout.split())


def test_text_without_stamps_on_stdin_is_untimed_not_empty() -> None:
    done = _analyze("-", stdin="hello\nno times here\n")
    assert done.returncode == 5
    assert "empty" not in done.stderr and "no line carries a kernel timestamp" in done.stderr

"""Logs with no timestamps (2.6-era consoles pasted into mails, tests/data/hw): what their text says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bootscope.parse.untimed import UntimedInitcall, read_untimed

HW = Path(__file__).resolve().parents[1] / "data" / "hw"


def test_t61p_2_6_25_cpus_release_and_msecs_initcalls() -> None:
    # linux-mm <20080418005034.6e4dd9e7.akpm@linux-foundation.org>: "Brought up 2 CPUs", names with "()"
    facts = read_untimed((HW / "x86-t61p-2.6.25-untimed.log").read_text().splitlines())
    assert facts.release == "2.6.25-mm1"  # from the warning's "Not tainted 2.6.25-mm1 #15"
    assert facts.cpus == 2
    assert facts.cmdline is None
    assert facts.initcalls == (
        UntimedInitcall("init_cpufreq_transition_notifier_list", 0, 0),
        UntimedInitcall("net_ns_init", 0, 0),
    )


def test_piii_2_6_27_msecs_durations_become_usecs() -> None:
    facts = read_untimed((HW / "x86-piii-440bx-2.6.27-untimed.log").read_text().splitlines())
    assert facts.release == "2.6.27-rc5-mm1"
    assert facts.cpus is None
    assert [(c.name, c.duration_us) for c in facts.initcalls] == [("agp_init", 0), ("agp_intel_init", 10_000)]


def test_banner_starts_a_new_boot_and_usecs_lines_are_read() -> None:
    lines = [
        "initcall old_init+0x0/0x10 returned 0 after 5 msecs",
        "Linux version 3.10.0-1160.71.1.el7.x86_64 (XXX@XXX) (gcc version 4.8.5) #1 SMP",
        "Command line: BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro",
        "smp: Brought up 2 nodes, 56 CPUs",
        "initcall pci_init+0x0/0x20 [pci] returned -19 after 1234 usecs",
    ]
    facts = read_untimed(lines)
    assert facts.release == "3.10.0-1160.71.1.el7.x86_64"
    assert facts.cmdline == "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro"
    assert facts.cpus == 56
    assert facts.initcalls == (UntimedInitcall("pci_init", -19, 1234),)


def test_analyze_reports_what_an_untimed_log_says_and_exits_5() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bootscope", "analyze", str(HW / "x86-piii-440bx-2.6.27-untimed.log")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 5
    assert "2.6.27-rc5-mm1" in done.stdout and "agp_intel_init" in done.stdout and "10.000 ms" in done.stdout
    errors = done.stderr.strip().splitlines()
    assert len(errors) == 1 and "cannot be timed" in errors[0]


def test_untimed_log_as_json_says_what_it_can_and_exits_5() -> None:
    log = HW / "x86-piii-440bx-2.6.27-untimed.log"
    done = subprocess.run(
        [sys.executable, "-m", "bootscope", "analyze", str(log), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 5, done.stderr
    assert done.stderr.count("\n") == 1 and "cannot be timed" in done.stderr
    document = json.loads(done.stdout)
    assert document["timed"] is False and document["format"] == "untimed"
    assert "cannot be timed" in document["reason"]
    assert document["identity"] == {"release": "2.6.27-rc5-mm1", "cmdline": None, "cpus": None}
    calls = document["initcalls"]["calls"]
    slowest_first = [(call["name"], call["duration_us"]) for call in calls]
    assert slowest_first == [("agp_intel_init", 10_000), ("agp_init", 0)]
    assert document["initcalls"]["total_us"] == 10_000 and document["initcalls"]["count"] == 2

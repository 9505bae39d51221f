"""analyze_boot on real logs; expected values are read from the log text independently (regexes here)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bootscope.analyze import analyze_boot
from bootscope.analyze.advisor import advise
from bootscope.errors import InputError
from bootscope.metrics import (
    BOOT_LOG_DEFINITIONS,
    DEFINITIONS,
    LATENCY_METRICS,
    POWERON_TO_KERNEL_S,
    REBOOT_BLIND_S,
    REBOOT_DOWNTIME_S,
    REBOOT_SHUTDOWN_S,
    REBOOT_STOP_S,
    RESTART_TO_MARKER_S,
    UNITS,
)
from bootscope.model import LogLine
from bootscope.parse import parse_log
from bootscope.sources.files import read_text_lines

SMP4 = "debian-6.1-cloud-initcall-smp4.log"


def _stamp(text: str, message: str) -> float:
    m = re.search(r"\[\s*(\d+\.\d+)\] +" + re.escape(message), text)
    assert m is not None, message
    return float(m.group(1))


def _boot(data_dir: Path, name: str) -> tuple[LogLine, ...]:
    return parse_log(read_text_lines(str(data_dir / name))).boots[-1]


def test_milestones_metrics_and_identity(data_dir: Path) -> None:
    text = (data_dir / SMP4).read_text()
    b = analyze_boot(_boot(data_dir, SMP4))
    assert b.metrics.kernel_init_s == _stamp(text, "Run /init as init process")
    assert b.metrics.userspace_s == float(re.search(r"BOOTSCOPE-MARKER uptime=(\S+)", text).group(1))  # type: ignore[union-attr]
    assert b.milestones["smp_start"] == _stamp(text, "smp: Bringing up secondary CPUs")
    assert b.milestones["devtmpfs"] == _stamp(text, "devtmpfs: initialized")
    assert b.identity.release == "6.1.0-56-cloud-amd64"
    assert b.identity.cpus == 4 and b.identity.arch == "x86_64"
    assert b.identity.memory_kb == int(re.search(r"Memory: \d+K/(\d+)K available", text).group(1))  # type: ignore[union-attr]
    assert b.metrics.host_wall_s is None  # no host times in a plain log: not invented


def test_phases_add_up_and_shares(data_dir: Path) -> None:
    b = analyze_boot(_boot(data_dir, SMP4))
    total = b.metrics.userspace_s - b.first_s  # type: ignore[operator]
    assert sum(p.duration_s or 0 for p in b.phases) == pytest.approx(total)
    assert sum(p.share or 0 for p in b.phases) == pytest.approx(1.0)
    smp = next(p for p in b.phases if p.name == "smp_bringup")
    assert smp.duration_s == pytest.approx(b.milestones["smp_done"] - b.milestones["smp_start"])


def test_missing_phase_is_reported_not_guessed(data_dir: Path) -> None:
    b = analyze_boot(_boot(data_dir, "debian-6.1-cloud-smp2-kmsg.log"))
    userspace = next(p for p in b.phases if p.name == "userspace")
    assert userspace.duration_s is None and userspace.missing and "BOOTSCOPE-MARKER" in userspace.missing


def test_initcalls_against_the_log(data_dir: Path) -> None:
    text = (data_dir / SMP4).read_text()
    # anchored: "pci 0000:00:00.0: calling  quirk_..." lines are PCI quirks, not initcalls
    returned = re.findall(r"^\[[^\]]*\] initcall (\S+?)\+\S+ returned (-?\d+) after (\d+) usecs", text, re.M)
    calling = re.findall(r"^\[[^\]]*\] calling  (\S+?)\+", text, re.M)
    b = analyze_boot(_boot(data_dir, SMP4), top_n=5)
    assert b.initcalls.count == len(calling)
    assert b.initcalls.total_s == pytest.approx(sum(int(u) for _, _, u in returned) / 1e6)
    assert len(b.initcalls.failed) == sum(1 for _, r, _ in returned if r != "0")
    assert [c.duration_us for c in b.initcalls.top] == sorted((int(u) for _, _, u in returned), reverse=True)[
        :5
    ]
    assert b.initcalls.unfinished == ()


def test_unfinished_initcall() -> None:
    lines = [LogLine("calling  slow_init+0x0/0x10 @ 1", 1.0), LogLine("later", 2.0)]
    b = analyze_boot(lines)
    assert [c.name for c in b.initcalls.unfinished] == ["slow_init"]


def test_gaps_are_the_largest_and_skip_backward_steps(data_dir: Path) -> None:
    boot = _boot(data_dir, SMP4)
    b = analyze_boot(boot, top_n=3)
    times = [line.guest_s for line in boot if line.guest_s is not None]
    high, diffs = times[0], []
    for t in times[1:]:
        if t > high:
            diffs.append(t - high)
            high = t
    assert [g.duration_s for g in b.gaps] == pytest.approx(sorted(diffs, reverse=True)[:3])
    assert b.gaps[0].after.startswith("initcall crypto_algapi_init")


def test_cpu_bringup_from_progress_lines(data_dir: Path) -> None:
    text = (data_dir / SMP4).read_text()
    b = analyze_boot(_boot(data_dir, SMP4))
    assert [c.cpu for c in b.cpu_bringup.cpus] == [1, 2, 3]
    cpu2 = _stamp(text, "#2")
    assert b.cpu_bringup.cpus[1].start_s == cpu2
    assert b.cpu_bringup.cpus[1].duration_s == pytest.approx(_stamp(text, "#3") - cpu2)
    assert b.cpu_bringup.parallel_estimate_s == max(c.duration_s or 0 for c in b.cpu_bringup.cpus)


def test_seed_002_cycle_lines_and_tsc_advice(data_dir: Path) -> None:
    boot = _boot(data_dir, "seed-002-cpu-up-qemu.log")
    b = analyze_boot((LogLine("tsc: Detected 3000.000 MHz processor", 0.0), *boot))
    cpu10 = b.cpu_bringup.cpus[0]
    assert (cpu10.cpu, cpu10.phases_cycles, cpu10.total_cycles) == (
        10,
        (192950, 952898, 60014786, 28),
        61160662,
    )
    assert cpu10.duration_s == pytest.approx(61160662 / 3e9)
    assert any("TSC" in a.title for a in advise(b))


def test_marker_regex_on_an_untimed_line_takes_the_preceding_time() -> None:
    lines = [LogLine("Run /init as init process", 1.5), LogLine("login: ", None)]
    b = analyze_boot(lines, marker_regex=r"login:")
    assert b.metrics.userspace_s == 1.5


def test_host_metrics(data_dir: Path) -> None:
    boot = parse_log(read_text_lines(str(data_dir / "debian-6.1-cloud-smp2-grabserial.log"))).boots[0]
    b = analyze_boot(boot, host_start_ns=0)
    marker = next(line for line in boot if line.text.startswith("BOOTSCOPE-MARKER"))
    first = next(line for line in boot if line.guest_s is not None)
    assert b.metrics.host_wall_s == marker.host_ns / 1e9  # type: ignore[operator]
    assert b.metrics.host_kernel_start_s == first.host_ns / 1e9  # type: ignore[operator]


def test_bad_marker_regex() -> None:
    with pytest.raises(InputError):
        analyze_boot([LogLine("x", 1.0)], marker_regex="(")


def test_definitions_cover_the_metrics() -> None:
    assert {"kernel_init_s", "userspace_s", "host_wall_s", "kexec_downtime_s", "host_kernel_start_s"} <= set(
        DEFINITIONS
    )
    assert set(UNITS) == set(DEFINITIONS)
    # A boot log's metrics are all seconds; a latency run's are microseconds and never in a boot log,
    # nor are the reboot times an SSH target measures from outside the machine, nor a board's time
    # from the power-on order or a reboot's order to its marker (labgrid), which no log holds.
    assert {UNITS[name] for name in BOOT_LOG_DEFINITIONS} == {"s"}
    assert {UNITS[name] for name in LATENCY_METRICS} == {"us"}
    outside = {
        REBOOT_DOWNTIME_S,
        REBOOT_SHUTDOWN_S,
        REBOOT_STOP_S,
        REBOOT_BLIND_S,
        POWERON_TO_KERNEL_S,
        RESTART_TO_MARKER_S,
    }
    assert {UNITS[name] for name in outside} == {"s"}
    assert set(DEFINITIONS) - set(BOOT_LOG_DEFINITIONS) == set(LATENCY_METRICS) | outside


@pytest.mark.parametrize(
    ("cmdline", "init", "initrd_s"),
    [
        ("console=ttyS0", "/init", 2.0),  # the initramfs's /init (init/main.c ramdisk_execute_command)
        ("console=ttyS0", "/sbin/init", None),  # no initramfs: the root's init
        ("rdinit=/sbin/init console=ttyS0", "/sbin/init", 2.0),  # an initramfs whose init is elsewhere
        ("rdinit=/linuxrc init=/init", "/init", None),  # the initramfs would have run /linuxrc
    ],
)
def test_initrd_time_only_for_a_boot_with_an_initramfs(
    cmdline: str, init: str, initrd_s: float | None
) -> None:
    lines = [
        LogLine("Linux version 6.1.0-56-cloud-amd64 (x)", 0.0),
        LogLine(f"Command line: {cmdline}", 0.0),
        LogLine(f"Run {init} as init process", 1.0),
        LogLine("systemd[1]: systemd 252.38-1~deb12u1 running in system mode (+PAM)", 3.0),
    ]
    found = analyze_boot(lines)
    assert found.metrics.kernel_init_s == 1.0 and found.milestones["systemd_start"] == 3.0
    assert found.metrics.initrd_s == initrd_s

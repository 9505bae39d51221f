"""Host load: other processes' CPU time and steal time, from /proc."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bootscope.lab import hostload
from bootscope.lab.hostload import HostLoadMeter, process_ticks, wait_for_idle

# It reads the host's load: in `make test` it runs after both lanes, alone (scripts/lanes.py).
pytestmark = pytest.mark.alone

TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def _fake_proc(root: Path, busy: tuple[int, ...], own: tuple[int, int, int, int], qemu: int | None) -> None:
    user, nice, system, irq, softirq, steal = busy
    (root / "stat").write_text(
        f"cpu  {user} {nice} {system} 9999 5 {irq} {softirq} {steal} 7 0\ncpu0 1 2 3\n"
    )
    (root / "self").mkdir(exist_ok=True)
    rest = " ".join(["0"] * 10)
    utime, stime, cutime, cstime = own
    (root / "self" / "stat").write_text(f"1 (py (x) y) S {rest} {utime} {stime} {cutime} {cstime} 20 0\n")
    if qemu is None:
        if (root / "42" / "stat").exists():
            (root / "42" / "stat").unlink()
    else:
        (root / "42").mkdir(exist_ok=True)
        (root / "42" / "stat").write_text(f"42 (qemu-system-x86) R {rest} {qemu} 0 0 0 20 0\n")


def test_meter_arithmetic_on_a_fake_proc(tmp_path: Path) -> None:
    _fake_proc(tmp_path, (100, 0, 50, 0, 0, 10), (5, 5, 0, 0), qemu=0)
    before_s = time.monotonic()
    meter = HostLoadMeter(proc=tmp_path)
    meter.start()
    meter.watch(42)
    # Busy grew by 300 ticks: we used 20 (10 own + 10 of a reaped child), live QEMU 200, others 80.
    _fake_proc(tmp_path, (350, 10, 80, 5, 5, 25), (10, 10, 5, 5), qemu=200)
    load = meter.stop()
    assert abs(load.other_cpu_s - 80 * TICK_S) < 1e-9
    assert abs(load.steal_s - 15 * TICK_S) < 1e-9
    # Wall time is the meter's own clock, start to stop: within the time this test took around them.
    assert 0 < load.wall_s <= time.monotonic() - before_s


def test_process_ticks_with_odd_command_names(tmp_path: Path) -> None:
    _fake_proc(tmp_path, (0, 0, 0, 0, 0, 0), (3, 4, 5, 6), qemu=None)
    assert process_ticks("self", tmp_path) == 18
    assert process_ticks("self", tmp_path, children=False) == 7
    assert process_ticks(42, tmp_path) is None


def test_an_unreaped_busy_child_counts_as_other_load() -> None:
    meter = HostLoadMeter()
    meter.start()
    busy = subprocess.Popen(
        [sys.executable, "-c", "import time\nt=time.process_time()+1\nwhile time.process_time()<t: pass"]
    )
    os.waitid(os.P_PID, busy.pid, os.WEXITED | os.WNOWAIT)  # wait for its exit without reaping it
    # Exited but not yet reaped: its CPU second is not in our children's times, so it is "other".
    load = meter.stop()
    busy.wait()
    assert load.other_cpu_s >= 0.8
    assert load.other_cpus > 0


def test_watching_a_live_process_removes_its_cpu() -> None:
    """Two meters over the same second, one watching a busy loop: whatever else the host does is in
    both, so their difference is exactly the loop's own CPU time (to a few clock ticks)."""
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        watching, blind = HostLoadMeter(), HostLoadMeter()
        start = process_ticks(busy.pid)
        watching.start()
        blind.start()
        watching.watch(busy.pid)
        deadline = time.monotonic() + 60.0
        time.sleep(1.0)
        # On a loaded host the loop may get little CPU: wait until it has used a measurable amount.
        while (process_ticks(busy.pid) or 0) - (start or 0) < 0.3 / TICK_S and time.monotonic() < deadline:
            time.sleep(0.1)
        blind_load = blind.stop()
        watching_load = watching.stop()
        used = process_ticks(busy.pid)
    finally:
        busy.kill()
        busy.wait()
    assert start is not None and used is not None
    used_s = (used - start) * TICK_S
    assert used_s >= 0.3  # the loop really ran, so the property below is not 0 == 0
    removed_s = blind_load.other_cpu_s - watching_load.other_cpu_s
    assert abs(removed_s - used_s) <= 6 * TICK_S
    assert watching_load.wall_s >= 1.0


def test_wait_for_idle_thresholds() -> None:
    assert wait_for_idle(threshold_other_cpu=1000.0, timeout_s=2.0, interval_s=0.1)
    started = time.monotonic()
    assert not wait_for_idle(threshold_other_cpu=0.0, timeout_s=0.5, interval_s=0.1)
    assert time.monotonic() - started >= 0.5
    assert hostload.HostLoad(1.0, 0.0, 0.0).other_cpus == 0.0

"""How busy the rest of the host was while a boot ran: CPU time of other processes, and steal time.

A boot under TCG is one busy process; anything else that runs on the same cores (another engineer's
build, a second boot) slows it down. The meter reads the host's CPU totals from ``/proc/stat`` before
and after a boot and subtracts what bootscope itself used, which includes QEMU: a reaped QEMU's CPU
time is in our children's times (``/proc/self/stat`` cutime/cstime), a live one's in
``/proc/<pid>/stat``. Times are in clock ticks (usually 10 ms), so values below ~0.02 s are noise.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

_TICKS_PER_S = os.sysconf("SC_CLK_TCK")
_PROC = Path("/proc")


@dataclass(frozen=True, slots=True)
class HostLoad:
    """CPU seconds other processes used, seconds stolen by the hypervisor, and the window's wall seconds."""

    other_cpu_s: float
    steal_s: float
    wall_s: float

    @property
    def other_cpus(self) -> float:
        """Average number of CPUs other processes kept busy during the window (0 if the window is empty)."""
        return self.other_cpu_s / self.wall_s if self.wall_s > 0 else 0.0


@dataclass(frozen=True, slots=True)
class _Snapshot:
    busy_ticks: int
    steal_ticks: int
    own_ticks: int
    monotonic_ns: int


def _host_ticks(proc: Path) -> tuple[int, int]:
    """Return (busy, steal) ticks summed over all CPUs from the ``cpu`` line of /proc/stat."""
    # Documentation/filesystems/proc.rst: user nice system idle iowait irq softirq steal guest guest_nice;
    # guest time is already counted in user, so it is not added again.
    with (proc / "stat").open() as handle:
        fields = handle.readline().split()
    values = [int(value) for value in fields[1:]] + [0] * 10
    user, nice, system, _idle, _iowait, irq, softirq, steal = values[:8]
    return user + nice + system + irq + softirq, steal


def process_ticks(pid: int | str, proc: Path = _PROC, children: bool = True) -> int | None:
    """Return utime+stime (plus reaped children's cutime+cstime if ``children``) of ``pid`` in ticks.

    Returns None if the process is gone.
    """
    try:
        raw = (proc / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after its last ')'.
    after = raw[raw.rfind(")") + 2 :].split()
    utime, stime, cutime, cstime = (int(value) for value in after[11:15])
    return utime + stime + (cutime + cstime if children else 0)


class HostLoadMeter:
    """Measures other processes' CPU time and steal time between ``start()`` and ``stop()``.

    Call ``watch(pid)`` for a process of ours that is not (yet) our reaped child, e.g. QEMU right after it
    started (``boot_once(..., on_start=meter.watch)``): if it is still running at ``stop()`` its CPU
    time is subtracted too.
    """

    def __init__(self, proc: Path = _PROC) -> None:
        self._proc = proc
        self._start: _Snapshot | None = None
        self._watched: dict[int, int] = {}

    def _snapshot(self) -> _Snapshot:
        busy, steal = _host_ticks(self._proc)
        own = process_ticks("self", self._proc) or 0
        return _Snapshot(busy, steal, own, time.monotonic_ns())

    def start(self) -> None:
        """Take the first snapshot (call right before the boot)."""
        self._watched = {}
        self._start = self._snapshot()

    def watch(self, pid: int) -> None:
        """Count ``pid``'s CPU time from now on as ours, not as other processes' load."""
        self._watched[pid] = process_ticks(pid, self._proc) or 0

    def stop(self) -> HostLoad:
        """Return the load since ``start()``; raises RuntimeError if ``start()`` was not called."""
        if self._start is None:
            raise RuntimeError("HostLoadMeter.stop() called before start()")
        live_ticks = 0
        for pid, at_watch in self._watched.items():
            now = process_ticks(pid, self._proc)
            if now is not None:  # gone: if we reaped it, its time is in our own cutime/cstime
                live_ticks += max(0, now - at_watch)
        end = self._snapshot()
        own = end.own_ticks - self._start.own_ticks + live_ticks
        other = max(0, end.busy_ticks - self._start.busy_ticks - own)
        return HostLoad(
            other_cpu_s=other / _TICKS_PER_S,
            steal_s=max(0, end.steal_ticks - self._start.steal_ticks) / _TICKS_PER_S,
            wall_s=(end.monotonic_ns - self._start.monotonic_ns) / 1e9,
        )


def wait_for_idle(
    threshold_other_cpu: float, timeout_s: float, interval_s: float = 0.5, proc: Path = _PROC
) -> bool:
    """Wait until other processes use less than ``threshold_other_cpu`` CPUs (averaged over one interval).

    ``threshold_other_cpu`` is in CPUs (0.2 = a fifth of one core). Returns True as soon as one interval
    is that quiet, False if none was within ``timeout_s`` seconds.
    """
    deadline = time.monotonic() + timeout_s
    meter = HostLoadMeter(proc)
    while True:
        meter.start()
        time.sleep(max(0.05, min(interval_s, deadline - time.monotonic())))
        if meter.stop().other_cpus < threshold_other_cpu:
            return True
        if time.monotonic() >= deadline:
            return False

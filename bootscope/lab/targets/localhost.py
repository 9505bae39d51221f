"""LocalHost: this machine, which runs commands (the ``local`` target of ``latency run``).

It implements :class:`bootscope.lab.targets.base.RunsCommands`: it runs one command and returns its
output, starts and stops background load, and reads the facts of the kernel it measures. An SSH
machine (:mod:`bootscope.lab.targets.ssh.machine`) implements the same, so a latency run measures
either the same way.
"""

from __future__ import annotations

import os
import platform
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from bootscope.errors import BootError
from bootscope.lab.hostinfo import host_info
from bootscope.lab.loads import LOADS, load_argv, preemption_from
from bootscope.lab.targets.base import CommandOutput
from bootscope.lab.where import Where

__all__ = ["LOADS", "CommandOutput", "LocalHost", "preemption_model"]


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def preemption_model() -> str | None:
    """Return this kernel's preemption model (see
    :func:`bootscope.lab.plans.latency_tools.preemption_from`)."""
    return preemption_from(_read("/sys/kernel/debug/sched/preempt"), platform.uname().version)


class LocalHost:
    """This machine: tools run as subprocesses; load is Debian's hackbench or stress-ng."""

    name = "local"
    where = "this host"
    on_this_host = True

    def run_command(self, argv: tuple[str, ...], timeout_s: float) -> CommandOutput:
        """Run ``argv`` here; raises BootError if the tool is missing or outlives ``timeout_s``."""
        start = time.monotonic()
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
        except FileNotFoundError:
            raise BootError(f"{argv[0]}: not installed (Debian: apt-get install rt-tests)") from None
        except subprocess.TimeoutExpired:
            raise BootError(f"{argv[0]} ran longer than {timeout_s:.0f} s and was stopped") from None
        return CommandOutput(argv, done.stdout + done.stderr, done.returncode, time.monotonic() - start)

    def start_load(self, load: str) -> object | None:
        """Start ``load`` in its own process group; raises InputError for an unknown load."""
        argv = load_argv(load, os.cpu_count() or 1)
        if argv is None:
            return None
        try:
            return subprocess.Popen(
                argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
            )
        except FileNotFoundError:
            raise BootError(
                f"{argv[0]}: not installed (apt-get install {'rt-tests' if load == 'hackbench' else load})"
            ) from None

    def stop_load(self, handle: object | None) -> None:
        """Stop the load's whole process group (hackbench forks) and reap it."""
        if not isinstance(handle, subprocess.Popen):
            return
        try:
            os.killpg(handle.pid, signal.SIGTERM)
            handle.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(handle.pid, signal.SIGKILL)
            handle.wait()

    def host_info(self) -> dict[str, Any]:
        """Return this host's description (hostname, CPU, cores, kernel, QEMU and bootscope versions)."""
        return host_info()

    def kernel_facts(self) -> dict[str, Any]:
        """Return kernel release, /sys/kernel/realtime, preemption model, cmdline and governor."""
        return {
            "kernel_release": platform.uname().release,
            "kernel_version": platform.uname().version,
            "realtime": _read("/sys/kernel/realtime"),
            "preemption": preemption_model(),
            "cmdline": _read("/proc/cmdline"),
            "governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            "idle_driver": _read("/sys/devices/system/cpu/cpuidle/current_driver"),
            "idle_governor": _read("/sys/devices/system/cpu/cpuidle/current_governor_ro"),
            "cpus": os.cpu_count(),
        }


def check_where(where: Where) -> Where:
    """Return ``where`` (``local``: nothing to check): the local kind's row of the registry."""
    return where


def open_where(where: Where) -> LocalHost:
    """Return this host as the target ``where`` (``local``) names."""
    return LocalHost()

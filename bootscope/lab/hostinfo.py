"""What the host was: recorded with every experiment, because a boot time means little without it."""

from __future__ import annotations

import os
import platform
import socket
import subprocess
from pathlib import Path
from typing import Any

import bootscope


def _cpu_model(cpuinfo: Path) -> str | None:
    try:
        with cpuinfo.open(encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    return value.strip()
    except OSError:
        return None
    return None


def qemu_version(binary: str = "qemu-system-x86_64") -> str | None:
    """Return the first line of ``BINARY --version`` (e.g. "QEMU emulator version 7.2.22 (...)"), or
    None if QEMU cannot be run."""
    try:
        result = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = result.stdout.strip().splitlines()
    return first[0] if first else None


def host_info(cpuinfo: Path = Path("/proc/cpuinfo")) -> dict[str, Any]:
    """Return a JSON-able description of this host: hostname, CPU model, usable cores, kernel, QEMU
    and bootscope versions (a value that cannot be found is None)."""
    return {
        "hostname": socket.gethostname(),
        "cpu_model": _cpu_model(cpuinfo),
        "cores": len(os.sched_getaffinity(0)),
        "host_kernel": platform.release(),
        "qemu_version": qemu_version(),
        "bootscope_version": bootscope.__version__,
        "python": platform.python_version(),
    }


def measuring_host(cpuinfo: Path = Path("/proc/cpuinfo")) -> dict[str, Any]:
    """Return what every stored boot says about the host that measured it: ``host`` (hostname),
    ``cpu_model`` (None if /proc/cpuinfo does not say) and ``host_kernel`` (its release: a guest's
    boot depends on the host's KVM and scheduler, seed 001)."""
    return {"host": socket.gethostname(), "cpu_model": _cpu_model(cpuinfo), "host_kernel": platform.release()}

"""What a machine that runs commands through a shell (an SSH machine, a labgrid board's shell) is
asked, as shell text, and how its answers are read: the facts a latency result depends on, and a
background load started in a process group of its own and stopped with it."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from bootscope.lab.loads import preemption_from

# The same facts LocalHost.kernel_facts reads, in its order, printed as NAME=VALUE by the machine's shell.
KERNEL_FACTS_COMMAND = (
    'r() { cat "$1" 2>/dev/null | head -n 1; }; '
    'echo "kernel_release=$(uname -r)"; echo "kernel_version=$(uname -v)"; '
    'echo "realtime=$(r /sys/kernel/realtime)"; echo "sched_preempt=$(r /sys/kernel/debug/sched/preempt)"; '
    'echo "cmdline=$(r /proc/cmdline)"; '
    'echo "governor=$(r /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor)"; '
    'echo "idle_driver=$(r /sys/devices/system/cpu/cpuidle/current_driver)"; '
    'echo "idle_governor=$(r /sys/devices/system/cpu/cpuidle/current_governor_ro)"; '
    'echo "cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc)"'
)


@dataclass(frozen=True, slots=True)
class RemoteLoad:
    """Background load running on the machine: the process group id it leads there."""

    group: int


def kernel_facts_from(text: str) -> dict[str, Any]:
    """Return the facts KERNEL_FACTS_COMMAND printed (``text``), in the keys and order of
    :meth:`bootscope.lab.targets.localhost.LocalHost.kernel_facts`; None where it says nothing."""
    said = dict(line.partition("=")[::2] for line in text.splitlines() if "=" in line)
    value = {key.strip(): (item.strip() or None) for key, item in said.items()}
    cpus = value.get("cpus")
    return {
        "kernel_release": value.get("kernel_release"),
        "kernel_version": value.get("kernel_version"),
        "realtime": value.get("realtime"),
        "preemption": preemption_from(value.get("sched_preempt"), value.get("kernel_version")),
        "cmdline": value.get("cmdline"),
        "governor": value.get("governor"),
        "idle_driver": value.get("idle_driver"),
        "idle_governor": value.get("idle_governor"),
        "cpus": int(cpus) if cpus and cpus.isdigit() else None,
    }


def start_load_command(argv: tuple[str, ...]) -> str:
    """Return the shell command that starts ``argv`` in the background in a session of its own and
    prints its pid (the process group to stop)."""
    return f"nohup setsid {shlex.join(argv)} >/dev/null 2>&1 & echo $!"


def stop_load_command(group: int) -> str:
    """Return the shell command that stops process group ``group`` (TERM, then KILL a second later)."""
    return f"kill -TERM -- -{group} 2>/dev/null; sleep 1; kill -KILL -- -{group} 2>/dev/null; true"

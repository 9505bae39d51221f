"""The latency tools' settings and command lines: how one variant runs cyclictest, oslat or
``rtla timerlat``, and its background load (hackbench, stress-ng).

cyclictest is run the way practitioners run it: ``-m -S -p 95 -i 200 -h H --mainaffinity 0``, its text
histogram and its ``--json`` kept. Where the tool runs is a target's business; what it printed becomes
a record in :mod:`bootscope.lab.workloads.latency_record`.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from bootscope.errors import InputError
from bootscope.lab.loads import LOADS as LOADS
from bootscope.lab.loads import load_argv as load_argv
from bootscope.lab.loads import preemption_from as preemption_from

TOOLS = ("cyclictest", "oslat", "timerlat")
JSON_SUFFIX = "--json="


@dataclass(frozen=True, slots=True)
class LatencySettings:
    """How one variant runs its tool: ``duration_s`` per run, wake-up ``interval_us``, real-time
    ``priority``, ``histogram_us`` buckets (1 us each; slower samples are overflow), ``threads``
    (None: one per CPU, cyclictest's ``-S``), ``affinity`` (a CPU list for the measuring threads,
    None: one per CPU), ``main_cpu`` (the housekeeping CPU of cyclictest's main thread, None: any)
    and the background ``load``."""

    tool: str = "cyclictest"
    duration_s: int = 60
    interval_us: int = 200
    priority: int = 95
    histogram_us: int = 400
    threads: int | None = None
    affinity: str | None = None
    main_cpu: int | None = 0
    load: str = "none"


def check_settings(settings: LatencySettings) -> None:
    """Raise InputError for an unknown tool or load, or numbers out of range."""
    if settings.tool not in TOOLS:
        raise InputError(f"unknown latency tool {settings.tool!r}; use {', '.join(TOOLS)}")
    if settings.load not in LOADS:
        raise InputError(f"unknown load {settings.load!r}; use {', '.join(LOADS)}")
    if settings.duration_s < 1 or settings.interval_us < 1 or settings.histogram_us < 1:
        raise InputError("duration, interval and histogram must be at least 1")
    if settings.tool == "oslat" and not 4 <= settings.histogram_us <= 1024:
        raise InputError(f"oslat takes 4..1024 histogram buckets (-b), not {settings.histogram_us}")
    if not 1 <= settings.priority <= 99:
        raise InputError(f"priority must lie in 1..99, not {settings.priority}")


def tool_argv(settings: LatencySettings, json_path: str | None = None) -> tuple[str, ...]:
    """Return the tool's command line; cyclictest writes ``--json`` to ``json_path`` when given.
    Raises InputError for an unknown tool."""
    check_settings(settings)
    if settings.tool == "cyclictest":
        argv = ["cyclictest", "-m", "-p", str(settings.priority), "-i", str(settings.interval_us)]
        if settings.threads is None and settings.affinity is None:
            argv.insert(1, "-S")  # one thread per CPU, each pinned, all at one priority
        else:
            argv += [f"--threads={settings.threads}"] if settings.threads else ["-t"]
            if settings.affinity:
                argv.append(f"--affinity={settings.affinity}")
        if settings.main_cpu is not None:
            argv.append(f"--mainaffinity={settings.main_cpu}")
        argv += ["-D", f"{settings.duration_s}s", "-h", str(settings.histogram_us), "-q"]
        if json_path:
            argv.append(f"{JSON_SUFFIX}{json_path}")
        return tuple(argv)
    if settings.tool == "oslat":
        argv = ["oslat", "-D", f"{settings.duration_s}s", "-f", str(settings.priority)]
        argv += ["-b", str(settings.histogram_us)]
        if settings.affinity:
            argv += ["-c", settings.affinity]
        return tuple(argv)
    # rtla timerlat hist: -p period (us), -P f:PRIO (SCHED_FIFO), -E buckets of 1 us, -d duration.
    argv = ["rtla", "timerlat", "hist", "-d", str(settings.duration_s), "-p", str(settings.interval_us)]
    argv += ["-P", f"f:{settings.priority}", "-E", str(settings.histogram_us)]
    if settings.affinity:
        argv += ["-c", settings.affinity]
    return tuple(argv)


def command_text(argv: Sequence[str]) -> str:
    """Return ``argv`` as one shell-quoted line."""
    return shlex.join(argv)

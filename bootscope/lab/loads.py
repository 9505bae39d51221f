"""What a machine runs beside a measuring tool, and how its kernel's preemption model is read: one
text for the plans that check a load's name and the targets that start it (this host, an SSH
machine, a board's or a domain's shell)."""

from __future__ import annotations

from bootscope.errors import InputError

LOADS = ("none", "hackbench", "stress-ng")


def load_argv(load: str, cpus: int) -> tuple[str, ...] | None:
    """Return the command line of background ``load`` for a machine of ``cpus`` CPUs (None for
    ``none``): hackbench's default 10 groups of 40 tasks passing 512-byte messages, or stress-ng with
    one CPU worker per CPU. Raises InputError for an unknown load."""
    if load not in LOADS:
        raise InputError(f"unknown load {load!r}; use {', '.join(LOADS)}")
    if load == "none":
        return None
    if load == "hackbench":
        return ("hackbench", "-l", "100000000", "-s", "512")
    return ("stress-ng", "--cpu", str(max(cpus, 1)), "--timeout", "0")


def preemption_from(sched_preempt: str | None, uname_version: str | None) -> str | None:
    """Return the preemption model: the bracketed word of ``/sys/kernel/debug/sched/preempt``
    (``full`` in ``none voluntary (full)``), else PREEMPT_RT/PREEMPT_DYNAMIC/PREEMPT from ``uname -v``,
    None if neither says."""
    if sched_preempt and "(" in sched_preempt and ")" in sched_preempt:
        return sched_preempt[sched_preempt.index("(") + 1 : sched_preempt.index(")")]
    words = (uname_version or "").split()
    for word in ("PREEMPT_RT", "PREEMPT_DYNAMIC", "PREEMPT"):
        if word in words:
            return word
    return None

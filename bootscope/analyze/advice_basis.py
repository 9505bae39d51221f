"""What every advice rule measures against: the kernel's part of the boot, the phase a time falls in,
whether a cost is worth a line, and the kernel's version."""

from __future__ import annotations

import re

from bootscope.model import Breakdown

# A sink must cost at least this share of the kernel's boot (and this many seconds) to be worth a line.
MIN_SHARE = 0.10
MIN_COST_S = 0.02

_VERSION = re.compile(r"(\d+)\.(\d+)")


def kernel_end_s(b: Breakdown) -> float | None:
    """Return the guest time (s) at which the kernel hands over to userspace: ``Run /init``, else the
    last ``Freeing unused kernel memory`` line, else the last timed line (None for an untimed log)."""
    for key in ("run_init", "free_init"):
        if key in b.milestones:
            return b.milestones[key]
    return b.last_s


def kernel_s(b: Breakdown) -> float | None:
    """Return the kernel's part of the boot in seconds (first line to ``kernel_end_s``), or None."""
    end = kernel_end_s(b)
    if b.first_s is None or end is None or end <= b.first_s:
        return None
    return end - b.first_s


def in_kernel(b: Breakdown, time_s: float) -> bool:
    """Whether guest time ``time_s`` falls before userspace starts (``Run /init`` or, without it, the
    kernel's freeing of its init memory); True where the log marks neither."""
    for key in ("run_init", "free_init"):
        if key in b.milestones:
            return time_s < b.milestones[key]
    return True


def phase_at(b: Breakdown, time_s: float) -> str | None:
    """Return the name of the phase that guest time ``time_s`` falls in ("userspace" from ``Run
    /init`` on), or None where no measured phase holds it."""
    run_init_s = b.milestones.get("run_init")
    if run_init_s is not None and time_s >= run_init_s:
        return "userspace"
    for phase in b.phases:
        if phase.start_s is not None and phase.end_s is not None and phase.start_s <= time_s < phase.end_s:
            return phase.name
    return None


def big(cost_s: float | None, b: Breakdown) -> bool:
    """Whether ``cost_s`` (s) is at least ``MIN_COST_S`` and ``MIN_SHARE`` of the kernel's boot."""
    total = kernel_s(b)
    return cost_s is not None and cost_s >= MIN_COST_S and (not total or cost_s / total >= MIN_SHARE)


def kernel_version(release: str | None) -> tuple[int, int] | None:
    """Return (major, minor) of a kernel release string ("6.1.0-56-cloud-amd64" -> (6, 1)), or None."""
    m = _VERSION.match(release or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def version_text(version: tuple[int, int]) -> str:
    """Return a (major, minor) version as "6.1"."""
    return f"{version[0]}.{version[1]}"


# The public talk whose measurements several rules quote.
TALK = "Usama Arif, 'Improving kexec boot time', Linux Plumbers Conference 2023"
PARAMS = "Documentation/admin-guide/kernel-parameters.txt"

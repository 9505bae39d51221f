"""What systemd says about a boot, for the terminal and as JSON: the output of ``systemd-analyze
time``, ``blame`` and ``critical-chain`` (pasted or collected) summed up on one line, the kernel part
and the userspace part side by side, as ``analyze`` sums up a kernel log."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from bootscope.model import SystemdAccounting

_PHASES = ("firmware", "loader", "kernel", "initrd", "userspace")


def systemd_summary(accounting: SystemdAccounting) -> str:
    """Return one line: systemd's phases in s (kernel, initrd, userspace...), the total, the target
    reached, the longest unit and the slowest link of the critical chain; or what is missing."""
    parts: list[str] = []
    time = accounting.time
    if time is not None and not time.finished:
        parts.append("boot not finished when systemd-analyze ran (no time: systemd had none)")
    elif time is not None:
        phases = [
            f"{name} {getattr(time, f'{name}_s'):.3f} s"
            for name in _PHASES
            if getattr(time, f"{name}_s") is not None
        ]
        line = " + ".join(phases)
        if time.total_s is not None:
            line += f" = {time.total_s:.3f} s"
        if time.target is not None and time.target_reached_s is not None:
            line += f"; {time.target} reached {time.target_reached_s:.3f} s into userspace"
        parts.append(line)
    else:
        parts.append("no systemd-analyze time line")
    if accounting.blame:
        unit, took_s = accounting.blame[0]
        parts.append(f"longest unit {unit} {took_s:.3f} s (of {len(accounting.blame)} listed)")
    slow = [link for link in accounting.critical_chain if link.took_s is not None]
    if slow:
        worst = max(slow, key=lambda link: link.took_s or 0.0)
        parts.append(f"critical chain's slowest {worst.unit} +{worst.took_s:.3f} s")
    return "; ".join(parts)


def render_systemd(accounting: SystemdAccounting, console: Console, top_n: int) -> None:
    """Print the summary (a clause a line, so that no narrow terminal splits a number from its
    unit), then the longest ``top_n`` units and the critical chain."""
    for clause in systemd_summary(accounting).split("; "):
        console.print(Text(clause))
    if accounting.blame:
        table = Table(
            title=f"Longest units (blame, {min(top_n, len(accounting.blame))} of {len(accounting.blame)})"
        )
        table.add_column("unit", overflow="fold")
        table.add_column("s", justify="right", no_wrap=True)
        for unit, took_s in accounting.blame[:top_n]:
            table.add_row(Text(unit), f"{took_s:.3f}")
        console.print(table)
    if accounting.critical_chain:
        console.print(Text("Critical chain (@ active at, + took, s into userspace)"), style="bold")
        for link in accounting.critical_chain:
            at = f" @{link.at_s:.3f}" if link.at_s is not None else ""
            took = f" +{link.took_s:.3f}" if link.took_s is not None else ""
            console.print(Text("  " * link.depth + link.unit + at + took))
    if accounting.failed:
        console.print(Text("failed units: " + ", ".join(accounting.failed)), style="red")


def systemd_json(accounting: SystemdAccounting, path: str) -> dict[str, Any]:
    """Return the JSON document of a systemd-analyze input (times in s; None where not printed)."""
    time = accounting.time
    return {
        "log": path,
        "format": "systemd-analyze",
        "summary": systemd_summary(accounting),
        "finished": None if time is None else time.finished,
        "phases_s": {} if time is None else {n: getattr(time, f"{n}_s") for n in _PHASES},
        "total_s": None if time is None else time.total_s,
        "target": None if time is None else time.target,
        "target_reached_s": None if time is None else time.target_reached_s,
        "blame": [{"unit": unit, "took_s": took_s} for unit, took_s in accounting.blame],
        "critical_chain": [
            {"unit": link.unit, "at_s": link.at_s, "took_s": link.took_s, "depth": link.depth}
            for link in accounting.critical_chain
        ],
    }

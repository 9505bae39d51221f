"""The transcript of one ``latency run`` measurement, split back into its sections.

A measurement, on this machine or in a guest, prints one transcript: section lines
``BOOTSCOPE-LATENCY <name>`` (written by :mod:`bootscope.lab.workloads.latency_place`) each start a section
that runs to the next one. The store keeps the transcript as the record's log, so every number can
be computed again from it. Sections: ``host`` (what the host started: the QEMU command line),
``facts`` (``key=value`` lines: kernel release, preemption, cmdline, governor, idle state, the tool
and load command lines), ``interrupts-before`` and ``interrupts-after`` (``/proc/interrupts``),
``tool`` (the tool's text output), ``tool-json`` (cyclictest's ``--json`` file), ``exit`` (the
tool's exit status). In a guest the kernel's own console lines come before the first guest section
and may interleave; they are kept but ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

SECTION_PREFIX = "BOOTSCOPE-LATENCY"
_SECTION_RE = re.compile(rf"{SECTION_PREFIX} ([a-z][a-z-]*)\s*$")
# A guest console line may carry a carriage return or a printk prefix before the section word.
_FACT_RE = re.compile(r"^\s*([a-z_]+)=(.*)$")


@dataclass(frozen=True, slots=True)
class Transcript:
    """The sections of one measurement's transcript: name -> its lines (section lines excluded)."""

    sections: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def text(self, name: str) -> str:
        """Return section ``name`` as text ('' when absent)."""
        return "\n".join(self.sections.get(name, ()))

    def facts(self) -> dict[str, str]:
        """Return the ``host`` and ``facts`` sections as one dict (an empty value stays '')."""
        found: dict[str, str] = {}
        for line in (*self.sections.get("host", ()), *self.sections.get("facts", ())):
            match = _FACT_RE.match(line)
            if match:
                found[match.group(1)] = match.group(2).strip()
        return found

    def exit_status(self) -> int | None:
        """Return the tool's exit status from the ``exit`` section, None when absent or unreadable."""
        for line in self.sections.get("exit", ()):
            if line.strip().lstrip("-").isdigit():
                return int(line.strip())
        return None


def section_line(name: str) -> str:
    """Return the line that starts section ``name``."""
    return f"{SECTION_PREFIX} {name}"


def split_transcript(lines: Iterable[str]) -> Transcript:
    """Return the sections of ``lines``; lines before the first section line are dropped, a section
    seen twice keeps its last copy. Never raises: a transcript cut short has fewer sections."""
    sections: dict[str, tuple[str, ...]] = {}
    current: str | None = None
    body: list[str] = []
    for raw in lines:
        line = raw.rstrip("\r\n")
        match = _SECTION_RE.search(line)
        if match:
            if current is not None:
                sections[current] = tuple(body)
            current, body = match.group(1), []
        elif current is not None:
            body.append(line.rstrip("\r"))
    if current is not None:
        sections[current] = tuple(body)
    return Transcript(sections)


def interrupt_counts(text: str) -> dict[str, int]:
    """Return ``/proc/interrupts`` as IRQ name -> count summed over CPUs (e.g. ``LOC``, ``0``).
    Lines that are not IRQ rows (the CPU header, ``ERR:``/``MIS:`` single numbers too) are read
    where they fit; anything else is skipped."""
    counts: dict[str, int] = {}
    for line in text.splitlines():
        name, colon, rest = line.strip().partition(":")
        if not colon or not name or " " in name:
            continue
        total = 0
        for word in rest.split():
            if not word.isdigit():
                break
            total += int(word)
        counts[name] = total
    return counts

"""Like for like: do two groups of boots differ in more than the change under test?

A boot time belongs to a kernel release, a command line, a CPU count, an amount of memory and a
machine. Two groups that differ in one of these besides the change a user means to measure answer
another question: 6.1 against 6.12 is not "my patch", and a side booted with ``initcall_debug``
prints (and times) every initcall, so its per-initcall rows exist on that side only because of the
option, and its boots are slower for the printing itself. This module compares the facts that the
logs and the store state (:class:`BootFacts`, one per boot) and returns every fact on which the
sides differ (``bootscope.model.LikeForLike``); a fact that one side does not state is not compared.
Callers mark their output with :func:`not_like_for_like` ("NOT LIKE FOR LIKE: ...", as ``latency``
does) rather than refuse: the user may mean exactly that difference.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import median

from bootscope.model import FactDifference, Identity, LikeForLike

PREFIX = "NOT LIKE FOR LIKE"
# Command-line knobs that change what the kernel prints or times (documented in the kernel's
# Documentation/admin-guide/kernel-parameters.txt), with whether they change which lines appear.
INSTRUMENTATION: dict[str, bool] = {
    "initcall_debug": True,
    "ignore_loglevel": True,
    "loglevel": True,
    "quiet": True,
    "debug": True,
    "printk.time": True,
    "earlyprintk": True,
    "earlycon": True,
    "tp_printk": True,
    "console": False,
    "printk.devkmsg": False,
    "trace_event": False,
    "ftrace": False,
}
# Memory the kernel reports varies a little with the CPU count (per-CPU areas): only a larger
# difference of the sides' medians is one of configuration.
MEMORY_TOLERANCE = 0.05
FLAG_ON, FLAG_OFF, UNSET = "on", "off", "unset"
# The knobs given bare (absent: off); the others take a value (absent: unset).
_FLAGS = frozenset({"initcall_debug", "ignore_loglevel", "quiet", "debug", "tp_printk"})


@dataclass(frozen=True, slots=True)
class BootFacts:
    """What shapes one boot's time besides the change under test, None where nothing states it:
    kernel release, the kernel command line, CPUs, memory (MiB), architecture, the accelerator
    (``kvm``, ``tcg``...) and the host that ran it, its kernel release and CPU model."""

    release: str | None = None
    cmdline: str | None = None
    cpus: int | None = None
    memory_mib: float | None = None
    arch: str | None = None
    accelerator: str | None = None
    host: str | None = None
    host_kernel: str | None = None  # the host's own kernel release (its KVM, seed 001)
    host_cpu: str | None = None


def facts_from_identity(
    identity: Identity, accelerator: str | None = None, host: str | None = None
) -> BootFacts:
    """Return the facts a boot's log states (``Identity``: release, command line, CPUs, memory in
    KiB, architecture), with the accelerator and host where a store recorded them. Raises nothing."""
    memory = None if identity.memory_kb is None else identity.memory_kb / 1024.0
    return BootFacts(
        identity.release,
        identity.cmdline,
        identity.cpus,
        memory,
        identity.arch,
        accelerator or None,
        host or None,
    )


def instrumentation(cmdline: str) -> dict[str, str]:
    """Return every INSTRUMENTATION knob's setting on ``cmdline``: ``on``/``off`` for a flag given
    bare, its value for ``knob=value`` (the last one wins, as the kernel reads them), ``off`` or
    ``unset`` when absent. Unbalanced quotes are read by blanks. Raises nothing."""
    try:
        words = shlex.split(cmdline)
    except ValueError:
        words = cmdline.split()
    found: dict[str, str] = {}
    for word in words:
        key, equals, value = word.partition("=")
        if key in INSTRUMENTATION:
            found[key] = value if equals else FLAG_ON
    return {knob: found.get(knob, FLAG_OFF if knob in _FLAGS else UNSET) for knob in INSTRUMENTATION}


def _values(texts: Sequence[str | None]) -> tuple[str, ...]:
    return tuple(sorted({text for text in texts if text is not None}))


def _plain(
    field: str, a: Sequence[str | None], b: Sequence[str | None], printing: bool = False
) -> list[FactDifference]:
    seen_a, seen_b = _values(a), _values(b)
    if not seen_a or not seen_b or seen_a == seen_b:
        return []
    return [FactDifference(field, seen_a, seen_b, printing)]


def _memory(a: Sequence[BootFacts], b: Sequence[BootFacts]) -> list[FactDifference]:
    sides = [[f.memory_mib for f in side if f.memory_mib is not None] for side in (a, b)]
    if not sides[0] or not sides[1]:
        return []
    mid_a, mid_b = median(sides[0]), median(sides[1])
    if abs(mid_a - mid_b) <= MEMORY_TOLERANCE * max(mid_a, mid_b):
        return []
    return [FactDifference("memory", (f"{mid_a:.0f} MiB",), (f"{mid_b:.0f} MiB",))]


def like_for_like(a: Sequence[BootFacts], b: Sequence[BootFacts]) -> LikeForLike:
    """Return every fact on which boots ``a`` and ``b`` differ: kernel release, each instrumentation
    knob of the command line (see INSTRUMENTATION), CPUs, memory (medians more than 5 % apart),
    architecture, accelerator, host, the host's kernel and CPU model. A fact counts when both sides
    state it. Raises nothing."""
    found: list[FactDifference] = []
    found += _plain("kernel release", [f.release for f in a], [f.release for f in b])
    knobs_a = [instrumentation(f.cmdline) for f in a if f.cmdline is not None]
    knobs_b = [instrumentation(f.cmdline) for f in b if f.cmdline is not None]
    for knob, printing in INSTRUMENTATION.items():
        found += _plain(knob, [k[knob] for k in knobs_a], [k[knob] for k in knobs_b], printing)
    found += _plain("cpus", [_text(f.cpus) for f in a], [_text(f.cpus) for f in b])
    found += _memory(a, b)
    for name in ("arch", "accelerator", "host"):
        found += _plain(name, [getattr(f, name) for f in a], [getattr(f, name) for f in b])
    found += _plain("host kernel", [f.host_kernel for f in a], [f.host_kernel for f in b])
    found += _plain("host CPU", [f.host_cpu for f in a], [f.host_cpu for f in b])
    return LikeForLike(tuple(found))


def _text(value: int | None) -> str | None:
    return None if value is None else str(value)


def printing_differs(result: LikeForLike) -> tuple[str, ...]:
    """Return the names of the differing facts that change which lines a log holds (empty: none)."""
    return tuple(d.field for d in result.differences if d.changes_printing)


def not_like_for_like(result: LikeForLike, name_a: str, name_b: str) -> str | None:
    """Return one line naming every differing fact and both sides' values ("NOT LIKE FOR LIKE: the
    sides differ in cpus (smp1: 1; smp2: 2)"), or None when the sides are alike."""
    if result.ok:
        return None
    parts = [
        f"{d.field} ({name_a}: {', '.join(d.a)}; {name_b}: {', '.join(d.b)})" for d in result.differences
    ]
    return f"{PREFIX}: the sides differ in {', '.join(parts)}"

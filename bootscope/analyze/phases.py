"""A boot's milestones -> its phases, in boot order, never negative.

Phases share their boundaries: the first timed line, ``Memory:``, ``smp: Bringing up``, ``smp:
Brought up``, ``devtmpfs: initialized``, the first ``Freeing unused kernel`` line, ``Run /init`` and
the userspace marker, in that order (``BOUNDARIES``). Kernel series print some of these lines
elsewhere, so each boundary is checked against the others by its place in the log and by its time:

- 6.12 prints ``Memory: ...K/...K available`` from page_alloc_init_late() (mm/mm_init.c), after the
  secondary CPUs are up and the deferred pages initialised, no longer from mm_core_init() before
  them (tests/data/debian-6.12-cloud-smp2.log). Where the ``Memory:`` line is out of order or
  missing, setup ends at ``SLUB: HWalign=...`` instead: mm/slub.c kmem_cache_init(), the step right
  after mem_init() in mm_core_init() (init/main.c mm_init() before 6.5), on every series.
- The corpus's 3.10 to 4.18 kernels print no ``Run /init as init process`` line (its 4.19 ones
  do). Without it kernel init ends at the last ``Freeing unused kernel ... memory`` line:
  init/main.c kernel_init() frees the init memory (free_initmem(), then mark_readonly() frees
  the section gaps) just before it runs init.

A boundary that still comes out of order is left out, with a note, and the phases it bounds are not
timed: a phase is never negative and phases never overlap.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bootscope.metrics import KERNEL_INIT_S
from bootscope.model import Phase

# (phase, starting milestone, ending milestone), in boot order
PHASES: tuple[tuple[str, str, str], ...] = (
    ("setup", "first_line", "memory_available"),
    ("mm_init", "memory_available", "smp_start"),
    ("smp_bringup", "smp_start", "smp_done"),
    ("post_smp", "smp_done", "devtmpfs"),
    ("initcalls", "devtmpfs", "free_init"),
    ("free_init", "free_init", "run_init"),
    ("userspace", "run_init", "userspace"),
)
BOUNDARIES: tuple[str, ...] = (
    "first_line",
    "memory_available",
    "smp_start",
    "smp_done",
    "devtmpfs",
    "free_init",
    "run_init",
    "userspace",
)
# The milestone that stands in for a boundary whose own line is missing or (for memory_available)
# out of order, as the module's docstring explains.
STAND_INS: dict[str, str] = {"memory_available": "slab_ready", "run_init": "free_init_last"}

# What each milestone's line looks like, to say which line was missing.
MILESTONE_LINES: dict[str, str] = {
    "first_line": "a timed line",
    "memory_available": "Memory: ...K/...K available",
    "slab_ready": "SLUB: HWalign=...",
    "smp_start": "smp: Bringing up secondary CPUs",
    "smp_done": "smp: Brought up N nodes, M CPUs",
    "deferred_pages_done": "node N deferred pages initialised",
    "devtmpfs": "devtmpfs: initialized",
    "free_init": "Freeing unused kernel ... memory",
    "free_init_last": "Freeing unused kernel ... memory",
    "run_init": "Run /init as init process",
    "first_userspace": "a userspace line after Run /init",
    "userspace": "BOOTSCOPE-MARKER ... uptime=S (or a --marker match)",
}


@dataclass(frozen=True, slots=True)
class Mark:
    """One milestone's place: its guest time (s), the index of its line in the boot, and the
    resolution of that time (s): 0 for a printk stamp, 0.01 for the marker's ``uptime=1.70``, which
    /proc/uptime truncates to centiseconds (so the moment itself lies in [t_s, t_s + resolution_s))."""

    t_s: float
    index: int
    resolution_s: float = 0.0


@dataclass(frozen=True, slots=True)
class PhaseTable:
    """The phases in boot order, the boundary each milestone slot resolved to (its milestone name;
    absent where none is usable), and notes on every stand-in or out-of-order line (one line each)."""

    phases: tuple[Phase, ...]
    chosen: dict[str, str]
    notes: tuple[str, ...]


def build_phases(marks: Mapping[str, Mark], end_s: float | None) -> PhaseTable:
    """Return the phases of one boot from its milestones ``marks`` (guest s and line index each).

    ``end_s`` (guest s) closes the boot for the shares (each phase's fraction of first line to
    ``end_s``). A boundary missing or out of order leaves its phases untimed (``Phase.missing``
    says why); a stand-in (``STAND_INS``) is used where the module's docstring says, with a note.
    Raises nothing.
    """
    chosen = {key: key for key in BOUNDARIES if key in marks}
    for key, stand_in in STAND_INS.items():
        if key not in chosen and stand_in in marks:
            chosen[key] = stand_in
    dropped = _out_of_order(chosen, marks)
    memory_stand_in = STAND_INS["memory_available"]
    moved = ""  # why the Memory: line was not used
    own_memory = chosen.get("memory_available") == "memory_available"
    if own_memory and "memory_available" in dropped and memory_stand_in in marks:
        # 6.12: the Memory: line comes once the CPUs are up
        moved = _order_note("memory_available", chosen, marks)
        chosen["memory_available"] = memory_stand_in
        dropped = _out_of_order(chosen, marks)
    notes = [_stand_in_note(key, chosen[key], marks, dropped, moved) for key in STAND_INS if key in chosen]
    reasons = {key: _order_note(key, chosen, marks) for key in dropped}
    notes += [f"{reason}: {_phases_of(key)} not timed" for key, reason in reasons.items()]
    for key in dropped:
        del chosen[key]
    first = marks.get("first_line")
    total = end_s - first.t_s if first is not None and end_s is not None and end_s > first.t_s else None
    phases: list[Phase] = []
    for name, start_key, end_key in PHASES:
        start, end = _at(start_key, chosen, marks), _at(end_key, chosen, marks)
        if start is None or end is None:
            key = start_key if start is None else end_key
            why = reasons.get(key) or f"no '{MILESTONE_LINES[key]}' line"
            phases.append(Phase(name, start, end, None, None, why))
            continue
        # an end within its resolution before the start (a marker's "uptime=1.70" after "Run /init"
        # at 1.700311 s) is the same moment as far as the log can tell: no time passed that it shows
        duration = max(0.0, end - start)
        phases.append(Phase(name, start, end, duration, duration / total if total else None))
    return PhaseTable(tuple(phases), chosen, tuple(note for note in notes if note))


def _at(key: str, chosen: Mapping[str, str], marks: Mapping[str, Mark]) -> float | None:
    name = chosen.get(key)
    return None if name is None else marks[name].t_s


def _inverted(a: Mark, b: Mark) -> bool:
    """Whether ``a``, a boundary before ``b`` in boot order, comes after it in the log or in time
    (by more than the coarser of the two times' resolutions)."""
    return a.index > b.index or a.t_s > b.t_s + max(a.resolution_s, b.resolution_s)


def _out_of_order(chosen: Mapping[str, str], marks: Mapping[str, Mark]) -> set[str]:
    """Return the boundaries to leave out so that the rest are in boot order, by line and by time.

    The boundary in the most inverted pairs goes first (the ``Memory:`` line of 6.12 is inverted with
    both smp lines, each of which is inverted with it alone); boundaries tied at the most all go, as
    nothing says which of them moved.
    """
    keys = [key for key in BOUNDARIES if key in chosen]
    dropped: set[str] = set()
    while True:
        kept = [key for key in keys if key not in dropped]
        counts = dict.fromkeys(kept, 0)
        for i, a in enumerate(kept):
            for b in kept[i + 1 :]:
                if _inverted(marks[chosen[a]], marks[chosen[b]]):
                    counts[a] += 1
                    counts[b] += 1
        most = max(counts.values(), default=0)
        if most == 0:
            return dropped
        dropped |= {key for key, count in counts.items() if count == most}


def _order_note(key: str, chosen: Mapping[str, str], marks: Mapping[str, Mark]) -> str:
    """Say where the line of boundary ``key`` came: after a later boundary's, or before an earlier one's."""
    mark = marks[chosen[key]]
    position = BOUNDARIES.index(key)
    line = MILESTONE_LINES[chosen[key]]
    for other in BOUNDARIES[position + 1 :]:
        if other in chosen and other != key and _inverted(mark, marks[chosen[other]]):
            other_mark = marks[chosen[other]]
            return (
                f"the '{line}' line (at {mark.t_s:.3f} s) comes after"
                f" '{MILESTONE_LINES[chosen[other]]}' (at {other_mark.t_s:.3f} s), out of boot order"
            )
    for other in reversed(BOUNDARIES[:position]):
        if other in chosen and _inverted(marks[chosen[other]], mark):
            other_mark = marks[chosen[other]]
            return (
                f"the '{line}' line (at {mark.t_s:.3f} s) comes before"
                f" '{MILESTONE_LINES[chosen[other]]}' (at {other_mark.t_s:.3f} s), out of boot order"
            )
    return f"the '{line}' line is out of boot order"


def _phases_of(key: str) -> str:
    names = [name for name, start, end in PHASES if key in (start, end)]
    return " and ".join(names)


def _stand_in_note(key: str, used: str, marks: Mapping[str, Mark], dropped: set[str], moved: str) -> str:
    """The note for a boundary that a stand-in took (``moved``: why its own line was not used, ""
    where it is missing), or "" where its own line was used."""
    if used == key or key in dropped:
        return ""
    at = f"'{MILESTONE_LINES[used]}' line (at {marks[used].t_s:.3f} s)"
    if key == "run_init":
        return (
            "no 'Run /init as init process' line (older kernels print none):"
            f" {KERNEL_INIT_S} and the free_init phase end at the last {at},"
            " which kernel_init() prints just before it runs init"
        )
    why = moved or f"no '{MILESTONE_LINES[key]}' line"
    return (
        f"{why}: setup ends at the {at} instead, the slab allocator's start right after mem_init()"
        " (6.12 prints 'Memory:' once the deferred pages are initialised)"
    )

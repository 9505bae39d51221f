"""Match a Breakdown against boot-time sinks that the seeds name, and say what addresses each.

Every rule reads only the Breakdown (phases, gaps, initcalls, CPU bring-up, identity) and quotes its
evidence; ``cost_s`` is the time the evidence shows (None where the log cannot say).
"""

from __future__ import annotations

from collections.abc import Callable

from bootscope.model import Advice, Breakdown

# A sink must cost at least this share of the boot (and this many seconds) to be worth a line.
MIN_SHARE = 0.10
MIN_COST_S = 0.02


def advise(b: Breakdown) -> tuple[Advice, ...]:
    """Return advice for the known sinks this boot shows, costliest first (cost in seconds)."""
    found: list[Advice] = []
    for rule in _RULES:
        advice = rule(b)
        if advice is not None:
            found.append(advice)
    return tuple(sorted(found, key=lambda a: -(a.cost_s or 0.0)))


def _total_s(b: Breakdown) -> float | None:
    ends = [p.end_s for p in b.phases if p.end_s is not None]
    if b.first_s is None or not ends:
        return None
    return max(ends) - b.first_s


def _big(cost_s: float | None, b: Breakdown) -> bool:
    total = _total_s(b)
    return cost_s is not None and cost_s >= MIN_COST_S and (not total or cost_s / total >= MIN_SHARE)


def _struct_pages(b: Breakdown) -> Advice | None:
    # Seed 004: 1.7 s (40 %) before "Memory: ... available", fixed by deferring struct page init.
    phase = next((p for p in b.phases if p.name == "setup"), None)
    if phase is None or not _big(phase.duration_s, b) or "deferred_pages_done" in b.milestones:
        return None
    return Advice(
        "struct page initialisation before 'Memory: ... available'",
        f"{phase.duration_s:.3f} s from the first line to the 'Memory:' line, and no deferred page init",
        phase.duration_s,
        "CONFIG_DEFERRED_STRUCT_PAGE_INIT=y initialises most struct pages later, in parallel (seed 004);"
        " with many 1 GiB hugepages also hugetlb_free_vmemmap (HVO)",
    )


def _serial_smpboot(b: Breakdown) -> Advice | None:
    # Seeds 002 and 004: CPUs are brought up one after the other; 6.5+ can bring them up in parallel.
    cpus = b.cpu_bringup
    if cpus.serial_s is None or len(cpus.cpus) < 2 or not _big(cpus.serial_s, b):
        return None
    saving = cpus.serial_s - (cpus.parallel_estimate_s or 0.0)
    return Advice(
        "secondary CPUs are brought up one at a time",
        f"smp bring-up took {cpus.serial_s:.3f} s for {len(cpus.cpus)} CPUs; the slowest alone took"
        f" {cpus.parallel_estimate_s or 0.0:.3f} s",
        saving,
        "parallel CPU bring-up (Linux 6.5+, CONFIG_HOTPLUG_PARALLEL, cpuhp.parallel=1; x86 since 6.5)",
    )


def _tsc_sync(b: Breakdown) -> Advice | None:
    # Seed 002: the third wait phase (check_tsc_sync_source) took 60M cycles per CPU under QEMU.
    timed = [c for c in b.cpu_bringup.cpus if len(c.phases_cycles) >= 3 and c.total_cycles]
    if not timed:
        return None
    sync = sum(c.phases_cycles[2] for c in timed)
    total = sum(c.total_cycles or 0 for c in timed)
    if total == 0 or sync / total < 0.5:
        return None
    seconds = [
        c.duration_s * c.phases_cycles[2] / c.total_cycles for c in timed if c.duration_s and c.total_cycles
    ]
    return Advice(
        "TSC synchronisation check dominates CPU bring-up",
        f"{sync} of {total} bring-up cycles ({sync / total:.0%}) were spent in the TSC sync phase"
        f" over {len(timed)} CPUs",
        sum(seconds) if seconds else None,
        "tsc=reliable on the command line skips the sync check, but only where the TSC is known to be"
        " synchronised (e.g. a VM whose hypervisor guarantees it) (seed 002)",
    )


def _gap_family(prefixes: tuple[str, ...], title: str, remedy: str) -> Callable[[Breakdown], Advice | None]:
    def rule(b: Breakdown) -> Advice | None:
        hits = [
            g
            for g in b.gaps
            if g.before.lstrip().startswith(prefixes) or g.after.lstrip().startswith(prefixes)
        ]
        cost = sum(g.duration_s for g in hits)
        if not hits or not _big(cost, b):
            return None
        worst = max(hits, key=lambda g: g.duration_s)
        return Advice(
            title,
            f"{cost:.3f} s in {len(hits)} of the largest gaps, worst {worst.duration_s:.3f} s before"
            f" '{worst.after[:80]}'",
            cost,
            remedy,
        )

    return rule


def _slow_initcall(b: Breakdown) -> Advice | None:
    top = b.initcalls.top[0] if b.initcalls.top else None
    if top is None or top.duration_us is None or not _big(top.duration_us / 1e6, b):
        return None
    return Advice(
        f"initcall {top.name} is slow",
        f"initcall {top.name} returned after {top.duration_us} usecs",
        top.duration_us / 1e6,
        "build the driver as a module loaded later, disable it if unused, or let it probe"
        " asynchronously (driver_async_probe=<driver>)",
    )


def _serial_console(b: Breakdown) -> Advice | None:
    cmdline = b.identity.cmdline or ""
    if "initcall_debug" not in cmdline or "console=ttyS" not in cmdline:
        return None
    return Advice(
        "initcall_debug on a serial console slows the boot it measures",
        f"command line '{cmdline[:100]}' prints every initcall on a serial console",
        None,
        "measure headline times without initcall_debug (or with loglevel=4 so the lines stay in the"
        " ring buffer, not on the console); use initcall_debug only to find the slow initcall",
    )


_RULES: tuple[Callable[[Breakdown], Advice | None], ...] = (
    _struct_pages,
    _serial_smpboot,
    _tsc_sync,
    _gap_family(
        ("ACPI:", "ACPI "),
        "ACPI table loading and interpreter start",
        "seed 004: AML and OEM table loads took ~300 ms; check firmware tables (SSDTs) the machine"
        " does not need",
    ),
    _gap_family(
        ("pci ", "PCI", "pci_bus"),
        "PCI enumeration and probing",
        "seed 004: probing only the needed devices cut 120 ms to 40 ms (not upstream); remove unused"
        " devices from the VM",
    ),
    _gap_family(
        ("HugeTLB", "hugetlb"),
        "boot-time hugepage reservation",
        "seed 004: HVO (hugetlb_free_vmemmap=on) skips initialising struct pages that are freed later",
    ),
    _slow_initcall,
    _serial_console,
)

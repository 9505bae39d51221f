"""Advice read from the boot's largest silences: a silence is laid to a subsystem only when it falls in
the kernel's part of the boot and both the line that opens it and the line that ends it are that
subsystem's (or the ending line reports the wait itself, as a timeout or a reservation does). A
silence in userspace (udev loading modules, systemd starting units) is no kernel sink, whatever its
lines say.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bootscope.analyze.advice_basis import PARAMS, TALK, big, in_kernel, phase_at
from bootscope.analyze.machine import HARDWARE, VM, MachineFacts
from bootscope.model import Advice, Breakdown, Gap

GapRule = Callable[[Breakdown, MachineFacts], Advice | None]

# The first words of each subsystem's kernel messages (drivers/acpi/ pr_fmt "ACPI: " and dev_*
# "acpi DEVICE:"; drivers/pci/ "pci DEVICE:", "pci_bus DOMAIN:BUS:", "PCI: ", "pcieport DEVICE:").
ACPI_PREFIXES = ("ACPI:", "ACPI ", "acpi ")
PCI_PREFIXES = ("pci ", "PCI ", "PCI:", "pci_bus ", "pcieport ")
# drivers/pci/doe.c: a DOE mailbox that does not answer costs its timeout (1 s) before
# "pci DEVICE: DOE: [OFFSET] ABORT timed out".
_DOE_TIMEOUT = re.compile(r"pci \S+ DOE: .*timed out")
# mm/hugetlb.c report_hugepages(): "HugeTLB: registered 1.00 GiB page size, pre-allocated 500 pages"
# ("HugeTLB registered ..." before 5.16); the pages were reserved, and their struct pages
# initialised, just before it.
_HUGETLB = re.compile(r"HugeTLB:? registered (\S+ \S+) page size, pre-allocated (\d+) pages")


def _words(text: str) -> str:
    return text.lstrip()


def _both(gap: Gap, prefixes: tuple[str, ...]) -> bool:
    """Whether the line that opens ``gap`` and the one that ends it both start with one of ``prefixes``."""
    return _words(gap.before).startswith(prefixes) and _words(gap.after).startswith(prefixes)


def _kernel_gaps(b: Breakdown) -> list[Gap]:
    return [g for g in b.gaps if in_kernel(b, g.start_s)]


def _evidence(b: Breakdown, hits: list[Gap]) -> str:
    """One sentence: the total of ``hits`` (s), the phase(s) and the worst silence's two lines."""
    cost = sum(g.duration_s for g in hits)
    phases = sorted({phase_at(b, g.start_s) or "kernel" for g in hits})
    worst = max(hits, key=lambda g: g.duration_s)
    count = "1 of the largest silences" if len(hits) == 1 else f"{len(hits)} of the largest silences"
    return (
        f"{cost:.3f} s in {count} ({', '.join(phases)}), worst {worst.duration_s:.3f} s between"
        f" '{_words(worst.before)[:80]}' and '{_words(worst.after)[:80]}'"
    )


def _by_machine(machine: MachineFacts, vm: str, hardware: str, either: str) -> str:
    """The remedy that fits the machine: ``vm``, ``hardware``, or ``either`` where the log does not say."""
    if machine.kind == VM:
        return vm
    if machine.kind == HARDWARE:
        return hardware
    return either


def _acpi(b: Breakdown, machine: MachineFacts) -> Advice | None:
    hits = [g for g in _kernel_gaps(b) if _both(g, ACPI_PREFIXES)]
    cost = sum(g.duration_s for g in hits)
    if not hits or not big(cost, b):
        return None
    where = _by_machine(
        machine,
        "the VM's firmware builds the tables from its devices: fewer devices (or QEMU's microvm)"
        " shorten them",
        "the tables come from the firmware: an update, or setup options that disable unused devices,"
        " shrink them",
        "fewer devices (removed from a VM, disabled in a machine's firmware setup) mean fewer tables",
    )
    return Advice(
        "ACPI table loading and interpreter start",
        _evidence(b, hits),
        cost,
        f"{where}; AML and OEM table loads and the interpreter's start took 300 ms on a 128-CPU server"
        f" in {TALK}",
    )


def _pci(b: Breakdown, machine: MachineFacts) -> Advice | None:
    hits = [g for g in _kernel_gaps(b) if _both(g, PCI_PREFIXES) and not _DOE_TIMEOUT.match(_words(g.after))]
    cost = sum(g.duration_s for g in hits)
    if not hits or not big(cost, b):
        return None
    where = _by_machine(
        machine,
        "remove the devices this VM does not use from its configuration",
        "disable the controllers the machine does not use in its firmware setup",
        "remove unused devices from a VM, or disable them in a machine's firmware setup",
    )
    return Advice(
        "PCI enumeration and probing",
        _evidence(b, hits),
        cost,
        f"{where}: each device is enumerated and probed; probing only the 15 of 57 needed cut 120 ms to"
        f" 40 ms in {TALK} (an allow-list not in mainline)",
    )


def _pci_doe_timeout(b: Breakdown, machine: MachineFacts) -> Advice | None:
    hits = [g for g in _kernel_gaps(b) if _DOE_TIMEOUT.match(_words(g.after))]
    cost = sum(g.duration_s for g in hits)
    if not hits or not big(cost, b):
        return None
    worst = max(hits, key=lambda g: g.duration_s)
    device = _words(worst.after).split(" ", 2)[1].rstrip(":")
    return Advice(
        "a PCI device's DOE mailbox did not answer: the kernel waited for its timeout",
        _evidence(b, hits),
        cost,
        f"each wait is the 1 s timeout of drivers/pci/doe.c for a Data Object Exchange mailbox that does"
        f" not answer (device {device}): update that device's firmware and the system firmware, and try a"
        " current kernel; if it stays, report it to linux-pci@vger.kernel.org with `lspci -vvv`",
    )


def _hugetlb(b: Breakdown, machine: MachineFacts) -> Advice | None:
    hits: list[Gap] = []
    for g in _kernel_gaps(b):
        m = _HUGETLB.match(_words(g.after))
        if m is not None and int(m.group(2)) > 0:
            hits.append(g)
    cost = sum(g.duration_s for g in hits)
    if not hits or not big(cost, b):
        return None
    return Advice(
        "boot-time hugepage reservation",
        _evidence(b, hits),
        cost,
        f"hugetlb_free_vmemmap=on ({PARAMS}; Documentation/mm/vmemmap_dedup.rst) frees most of each"
        " huge page's struct pages; not initialising the ones it frees cut 2.6 s with 500 1 GiB pages"
        f" in {TALK}; reserving fewer pages at boot (hugepages=) helps too",
    )


GAP_RULES: tuple[GapRule, ...] = (_acpi, _pci, _pci_doe_timeout, _hugetlb)

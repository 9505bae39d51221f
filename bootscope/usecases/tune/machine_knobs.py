"""Knobs for what the kernel checks of its machine at boot, proposed where the log shows the check
ran: the delay loop's calibration (``lpj=``), the IO-APIC timer check and the TSC's stability checks
in a virtual machine (``no_timer_check``, ``tsc=reliable``), the vmemmap of reserved huge pages
(``hugetlb_free_vmemmap=on``, seed 004's live-update hosts), and CPU-bug mitigations (unsafe).
Each is documented in the kernel's ``Documentation/admin-guide/kernel-parameters.txt``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bootscope.model import Breakdown, LogLine
from bootscope.usecases.tune.knob import PARAMETERS_DOC, SAFE, UNSAFE, Knob

_LPJ = re.compile(r"Calibrating delay loop\.\.\. .*\blpj=(\d+)\)")
_MITIGATION = re.compile(r"\bMitigation: ")
# A guest: the firmware's DMI names a hypervisor's machine, or the kernel found a hypervisor.
_VM = re.compile(
    r"DMI: .*(?:QEMU|KVM|VMware|VirtualBox|Xen|Amazon EC2|Google Compute Engine"
    r"|Microsoft Corporation Virtual)"
    r"|Hypervisor detected|Booting paravirtualized kernel on (?:KVM|Xen|VMware|Hyper-V)"
)
_TIMER_CHECK = re.compile(r"\.\.TIMER: vector=")
# The TSC found unstable, or checked against another CPU's (each secondary CPU's TSC is, at bring-up).
_TSC_CHECKS = re.compile(r"tsc: Marking TSC unstable|TSC synchronization|TSC warp")
_HUGE_RESERVED = re.compile(r"HugeTLB: registered .* page size, pre-allocated ([1-9]\d*) pages")


def machine_knobs(words: set[str], breakdown: Breakdown, lines: Sequence[LogLine]) -> list[Knob]:
    """Return the knobs for the machine checks ``lines`` show ran, leaving out any whose word
    ``words`` (the command line's word names) already holds."""
    texts = [line.text for line in lines]
    found: list[Knob] = []
    lpj = next((m for text in texts if (m := _LPJ.search(text))), None)
    if lpj is not None and "lpj" not in words:
        found.append(
            Knob(
                f"+lpj={lpj[1]}",
                SAFE,
                f"{PARAMETERS_DOC} (lpj)",
                "the delay loop not calibrated at boot",
                "Calibrating delay loop ran (lpj printed)",
                add=(f"lpj={lpj[1]}",),
            )
        )
    guest = next((text for text in texts if _VM.search(text)), None)
    if guest is not None and "no_timer_check" not in words and any(_TIMER_CHECK.search(t) for t in texts):
        found.append(
            Knob(
                "+no_timer_check",
                SAFE,
                f"{PARAMETERS_DOC} (no_timer_check)",
                "the IO-APIC timer check skipped (in a VM its timer is known to work)",
                "..TIMER: check ran in a virtual machine",
                add=("no_timer_check",),
            )
        )
    tsc = next((text for text in texts if _TSC_CHECKS.search(text)), None)
    cpus = len(breakdown.cpu_bringup.cpus)
    if guest is not None and "tsc" not in words and (tsc is not None or cpus > 0):
        why = tsc.strip() if tsc is not None else f"{cpus} secondary CPUs' TSCs checked"
        found.append(
            Knob(
                "+tsc=reliable",
                SAFE,
                f"{PARAMETERS_DOC} (tsc=reliable, for virtualized environments)",
                "no TSC stability checks at boot or clocksource watchdog after it",
                why[:120],
                add=("tsc=reliable",),
            )
        )
    huge = next((m for text in texts if (m := _HUGE_RESERVED.search(text))), None)
    if huge is not None and "hugetlb_free_vmemmap" not in words:
        found.append(
            Knob(
                "+hugetlb_free_vmemmap=on",
                SAFE,
                f"{PARAMETERS_DOC} (hugetlb_free_vmemmap); seed 004",
                "the vmemmap of reserved huge pages freed",
                f"{huge[1]} huge pages reserved at boot",
                add=("hugetlb_free_vmemmap=on",),
            )
        )
    mitigated = sum(1 for text in texts if _MITIGATION.search(text))
    if mitigated and "mitigations" not in words:
        found.append(
            Knob(
                "+mitigations=off",
                UNSAFE,
                f"{PARAMETERS_DOC} (mitigations)",
                "CPU-bug mitigations off: no protection against those attacks",
                f"{mitigated} mitigations active",
                add=("mitigations=off",),
            )
        )
    return found

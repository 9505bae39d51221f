"""What kind of machine a boot ran on (a virtual machine or hardware), and whether the kernel said that
it turned parallel CPU bring-up off: facts the advisor needs to give advice that fits the machine.

Only the head of the log is read (up to ``smp: Brought up``, where every line used here is printed), so
a long log costs no more than its first few hundred lines. Each message names the kernel file that
prints it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bootscope.parse.columns import BootColumns

# Where no "smp: Brought up" line bounds the head, read at most this many lines.
HEAD_LINES = 4000

# arch/x86/kernel/cpu/hypervisor.c (init_hypervisor_platform): "Hypervisor detected: KVM"
_HYPERVISOR = re.compile(r"Hypervisor detected: (\S.*)")
# drivers/firmware/dmi_scan.c (dmi_setup): "DMI: <vendor> <product>/<board>, BIOS ..."
_DMI = re.compile(r"DMI: (\S.*)")
# The SMBIOS strings of common hypervisors' virtual machines (QEMU/KVM, VMware, VirtualBox, Xen, Hyper-V,
# bhyve, Parallels, cloud images), as their firmware fills the DMI system vendor and product fields.
_VM_DMI = re.compile(
    r"QEMU|KVM|VMware|VirtualBox|innotek|Xen|HVM domU|Bochs|BHYVE|Parallels|Virtual Machine|Amazon EC2"
    r"|Google Compute Engine|OpenStack|Cloud Hypervisor|Standard PC \("
)
# drivers/of/fdt.c (early_init_dt_scan / setup_machine_fdt): "Machine model: <model>"; old ARM board
# files print "Machine: <name>" (arch/arm/kernel/setup.c).
_MODEL = re.compile(r"(?:OF: fdt: )?Machine(?: model)?: (\S.*)")
# QEMU's virt boards name their device tree model so (hw/arm/virt.c "linux,dummy-virt", hw/riscv/virt.c).
_VM_MODEL = re.compile(r"dummy-virt|virtio,qemu|QEMU|KVM", re.IGNORECASE)
# arch/s390/kernel/setup.c (setup_arch): how Linux runs on s390.
_S390 = re.compile(r"(?:setup: )?Linux is running (natively|as a z/VM guest|under KVM|as a KVM guest)")
# arch/powerpc/kernel/setup-common.c (probe_machine): "Using PowerNV machine description" (bare metal
# OPAL); pSeries runs in a PowerVM or KVM partition.
_POWER = re.compile(r"Using (PowerNV|pSeries) machine description")
# arch/x86/kernel/smpboot.c (arch_cpuhp_init_parallel_bringup, 6.5+): "smpboot: Parallel CPU startup
# disabled by the platform" (6.6+; 6.5: "... disabled due to guest state encryption").
_PARALLEL_OFF = re.compile(r"(?:smpboot: )?Parallel CPU startup disabled\b.*")

VM = "virtual machine"
HARDWARE = "hardware"


@dataclass(frozen=True, slots=True)
class MachineFacts:
    """What the head of a boot's log says about its machine.

    ``kind`` is :data:`VM`, :data:`HARDWARE` or None (the log does not say); ``kind_line`` is the line
    that says so. ``parallel_off_line`` is the kernel's "Parallel CPU startup disabled ..." line, None
    where the log has none.
    """

    kind: str | None = None
    kind_line: str | None = None
    parallel_off_line: str | None = None


def read_machine(cols: BootColumns) -> MachineFacts:
    """Return what the head of the boot's log (to ``smp: Brought up``, else its first ``HEAD_LINES``
    lines) says about its machine. A hypervisor's mark anywhere in the head wins over a hardware one
    (a VM's firmware may describe a real-looking board). Raises nothing: lines it does not know are
    ignored."""
    end = min(cols.line_count, HEAD_LINES)
    done = next((index for name, index, _, _ in cols.known if name == "smp_done"), None)
    if done is not None:
        end = min(cols.line_count, done + 1)
    vm_line: str | None = None
    hardware_line: str | None = None
    parallel_off: str | None = None
    for index in range(end):
        text = cols.line(index).text.strip()
        if not text or text[0] not in "DHLMOSUPs":
            continue
        kind = _kind_of(text)
        if kind == VM and vm_line is None:
            vm_line = text
        elif kind == HARDWARE and hardware_line is None:
            hardware_line = text
        elif parallel_off is None and _PARALLEL_OFF.match(text):
            parallel_off = text
    if vm_line is not None:
        return MachineFacts(VM, vm_line, parallel_off)
    if hardware_line is not None:
        return MachineFacts(HARDWARE, hardware_line, parallel_off)
    return MachineFacts(None, None, parallel_off)


def _kind_of(text: str) -> str | None:
    """The kind of machine one line shows (VM or HARDWARE), or None if it shows neither."""
    if _HYPERVISOR.match(text):
        return VM
    m = _DMI.match(text)
    if m is not None:
        if _VM_DMI.search(m.group(1)):
            return VM
        # "DMI: Memory slots populated: 1/1" and the like describe no machine
        return None if m.group(1).startswith(("Memory slots", "not present")) else HARDWARE
    m = _MODEL.match(text)
    if m is not None:
        return VM if _VM_MODEL.search(m.group(1)) else HARDWARE
    m = _S390.match(text)
    if m is not None:
        return HARDWARE if m.group(1) == "natively" else VM
    m = _POWER.match(text)
    if m is not None:
        return HARDWARE if m.group(1) == "PowerNV" else VM
    return None

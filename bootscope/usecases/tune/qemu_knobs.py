"""Knobs for the QEMU machine a guest boots on (only when the target is QEMU: a board or a machine
over SSH has the hardware it has): devices of QEMU's x86 PC machines (``pc``, ``q35``) that the
kernel finds and sets up at boot, each switched off with a ``-machine PROPERTY=off`` option, proposed
where the boot's log shows the kernel met that device, and the other PC machine type (``q35``'s
PCI Express chipset for ``pc``'s i440FX, and back). They are of risk ``feature``: the guest loses
the device, or sees other hardware. The properties are QEMU's own (``qemu-system-x86_64 -machine
pc,help``), in QEMU 7.2.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bootscope.model import LogLine
from bootscope.usecases.tune.knob import FEATURE, Knob

QEMU_DOC = "qemu-system-x86_64 -machine pc,help"
# The firmware's DMI names QEMU's PC machines (i440FX + PIIX, Q35 + ICH9) on x86.
_QEMU_PC = re.compile(r"DMI: QEMU Standard PC \((i440FX|Q35)")
_OTHER_TYPE = {"i440FX": ("q35", "Q35 + ICH9, PCI Express"), "Q35": ("pc", "i440FX + PIIX, plain PCI")}
# property, what the guest loses, the lines that show the kernel met the device
_DEVICES: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("hpet", "HPET (the kernel's clocksource and calibration use other timers)",
     re.compile(r"hpet0: at MMIO|clocksource: hpet:")),
    ("i8042", "PS/2 keyboard and mouse controller",
     re.compile(r"i8042: PNP: PS/2 Controller|serio: i8042 ")),
    ("vmport", "VMware I/O port (its absolute mouse)", re.compile(r"VMMouse")),
    ("smbus", "system management bus", re.compile(r"claimed by PIIX4 SMB|piix4_smbus")),
)  # fmt: skip


def qemu_knobs(lines: Sequence[LogLine], qemu_args: Sequence[str]) -> list[Knob]:
    """Return the ``-machine PROPERTY=off`` knobs for the devices ``lines`` (a boot on QEMU's PC
    machine) show the kernel met, leaving out a property ``qemu_args`` (the variant's own QEMU
    options) already sets; none for a boot on another machine."""
    texts = [line.text for line in lines]
    machine = next((m for text in texts if (m := _QEMU_PC.search(text))), None)
    if machine is None:
        return []
    given = " ".join(qemu_args)
    found = []
    other, chipset = _OTHER_TYPE[machine[1]]
    if not re.search(r"(?:^|\s)(?:type=)?(?:pc|q35)\b|\btype=", given):
        found.append(
            Knob(
                f"+machine:type={other}",
                FEATURE,
                f"{QEMU_DOC} (type)",
                f"the guest boots on QEMU's {other} machine ({chipset}): other devices to set up",
                _short(machine.string),
                qemu_args=("-machine", f"type={other}"),
            )
        )
    for prop, loses, seen in _DEVICES:
        evidence = next((text for text in texts if seen.search(text)), None)
        if evidence is None or re.search(rf"\b{prop}=", given):
            continue
        found.append(
            Knob(
                f"+machine:{prop}=off",
                FEATURE,
                f"{QEMU_DOC} ({prop})",
                f"the guest has no {loses} for the kernel to set up",
                _short(evidence),
                qemu_args=("-machine", f"{prop}=off"),
            )
        )
    return found


def _short(text: str, limit: int = 80) -> str:
    """The evidence line without its printk stamp, cut to ``limit`` characters."""
    body = re.sub(r"^\[\s*\d+\.\d+\]\s*", "", text.strip())
    return body if len(body) <= limit else body[: limit - 3] + "..."

"""How a machine that powers on (a labgrid board, a libvirt domain) is booted again in one variant:
the way (cold: from power-on; warm: its firmware again; kexec: the kernel loaded again) and the words
of its command line. One text for the plans that name the variants and the targets that boot them."""

from __future__ import annotations

from dataclasses import dataclass

REBOOT_COLD = "cold"
REBOOT_WARM = "warm"
REBOOT_KEXEC = "kexec"
REBOOTS = (REBOOT_COLD, REBOOT_WARM, REBOOT_KEXEC)


@dataclass(frozen=True, slots=True)
class BoardVariant:
    """One variant of a board run: its name, how the board is rebooted, and for a kexec reboot or a
    cold boot the command line: ``cmdline`` in place of the board's own ('' keeps it), and
    ``append``'s words added to it (``quiet``, ``loglevel=3``: the console's cost as an experiment).
    A warm boot's command line is the board's own (its boot loader's); a cold boot takes one only
    where the power driver starts the kernel itself (labgrid's QEMU driver)."""

    name: str
    reboot: str = REBOOT_COLD
    append: str = ""
    cmdline: str = ""

    @property
    def has_words(self) -> bool:
        """Whether the variant changes the board's command line (``append`` or ``cmdline`` given)."""
        return bool(self.append or self.cmdline)

    def command_line(self, booted: str) -> str:
        """Return the command line a kexec reboot or cold boot of this variant boots, the board's own
        being ``booted``."""
        return f"{self.cmdline or booted} {self.append}".strip()

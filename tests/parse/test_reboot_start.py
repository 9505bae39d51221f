"""Where a reboot's new boot begins among the console lines since its order: the lines below are
shaped as a board's console prints them (x86's reboot and kexec messages, U-Boot's banner between
the two kernels on a warm reboot), and each expected index is counted by hand."""

from __future__ import annotations

from bootscope.model import LogLine
from bootscope.parse.reboot_start import new_boot_start


def _lines(*texts: str) -> list[LogLine]:
    return [LogLine(text, host_ns=i * 1_000_000) for i, text in enumerate(texts)]


ORDER = "bootscope-board# reboot"


def test_a_warm_reboot_begins_after_the_old_kernels_last_stamped_line() -> None:
    lines = _lines(
        ORDER,
        "[  376.101000] sd 0:0:0:0: [sda] Synchronizing SCSI cache",
        "[  376.112000] reboot: Restarting system",
        "[  376.113000] reboot: machine restart",
        "U-Boot 2023.01+dfsg-2 (Jan 20 2023 - 10:23:58 +0000)",
        "Starting kernel ...",
        "[    0.000000] Linux version 6.1.0-28-cloud-amd64 (debian-kernel@lists.debian.org)",
        "[    0.000000] Command line: console=ttyS0 panic=-1",
    )
    assert new_boot_start(lines) == 4  # U-Boot's banner: the firmware's lines are the new boot's


def test_a_quiet_old_kernel_leaves_every_line_to_the_new_boot() -> None:
    lines = _lines(ORDER, "[    0.000000] Linux version 6.1.0-28-cloud-amd64 (gcc)", "[    0.100000] x")
    assert new_boot_start(lines) == 0


def test_a_quiet_new_kernel_begins_after_the_old_kernels_last_line() -> None:
    lines = _lines(
        ORDER,
        "[  377.900000] kexec_core: Starting new kernel",
        "BOOTSCOPE-MARKER uptime=11.20",
    )
    assert new_boot_start(lines) == 2


def test_a_quiet_new_kernels_warning_starts_its_clock_again() -> None:
    lines = _lines(
        ORDER,
        "[  377.800000] kexec_core: Starting new kernel",
        "[  377.900000] kexec_core: Starting new kernel (again)",
        "[    1.250000] ACPI Warning: something the new kernel said at level warn",
        "[    2.000000] later",
        "BOOTSCOPE-MARKER uptime=11.20",
    )
    assert new_boot_start(lines) == 3


def test_no_stamps_at_all_is_all_the_new_boots() -> None:
    assert new_boot_start(_lines(ORDER, "BOOTSCOPE-MARKER uptime=1.0")) == 0
    assert new_boot_start([]) == 0

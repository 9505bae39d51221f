"""The headline metrics, their definitions (printed in every report) and units."""

from __future__ import annotations

DEFINITIONS: dict[str, str] = {
    "kernel_init_s": "guest printk time of the line 'Run /init as init process' (or /sbin/init and kin).",
    "userspace_s": (
        "guest uptime printed by the initramfs's first BOOTSCOPE-MARKER line, or the guest time of the"
        " first line that the user's --marker regex matches."
    ),
    "host_wall_s": (
        "host time from QEMU start to the marker line's arrival (includes firmware and decompression)."
    ),
    "host_kernel_start_s": (
        "host time from QEMU start to the arrival of the first line with a kernel timestamp"
        " (firmware, boot loader and decompression)."
    ),
    "kexec_downtime_s": (
        "host time from the old kernel's last line before 'kexec -e' to the new kernel's marker."
    ),
}

UNITS: dict[str, str] = dict.fromkeys(DEFINITIONS, "s")

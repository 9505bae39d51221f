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
    "kexec_blind_s": (
        "host time from the old kernel's last line before 'kexec -e' to the new kernel's printk time"
        " zero (purgatory, decompression and early setup, which the new kernel cannot log)."
    ),
    "kexec_load_s": "host time that the guest's 'kexec -l' (or -s) took to load the next kernel.",
}

UNITS: dict[str, str] = dict.fromkeys(DEFINITIONS, "s")

"""Defaults in one place; every other module takes its configuration as arguments."""

from __future__ import annotations

from pathlib import Path

import platformdirs

SAMPLES_PER_VARIANT = 24  # seed 000: the reviewer asks for at least 24 samples
SAMPLES_PER_CELL = 12  # sweep: a grid multiplies the boots, so fewer per cell
WARMUP_BOOTS = 1
ALPHA = 0.05
POWER = 0.80
BOOTSTRAP_SEED = 1  # compare: the same data give the same intervals
BOOT_TIMEOUT_S = 120.0
# A full image boot runs on past its login prompt until the collector has printed systemd's accounting:
# 60 to 100 s under TCG on a loaded 2-core host (bench/RESULTS.md), which the 120 s of a kernel boot
# cut short once in 12 such boots.
IMAGE_BOOT_TIMEOUT_S = 600.0
# A kexec chain's budget per kernel: under TCG one hop (kernel boot, archive, kexec load) takes about
# 10 s on an idle host; allow for a loaded one. A kernel that never prints its marker costs the whole
# budget, so keep it bounded.
KEXEC_TIMEOUT_PER_KERNEL_S = 60.0
KVM_PROBE_TIMEOUT_S = 20.0
DEFAULT_DB = "bootscope.db"
DEFAULT_MEM_MB = 512
DEFAULT_SMP = 1
TOP_N = 10
MARKER_PREFIX = "BOOTSCOPE-MARKER"


def cache_dir() -> Path:
    """Return the user's cache directory for kernels and initramfs images (created on demand)."""
    path = Path(platformdirs.user_cache_dir("bootscope"))
    path.mkdir(parents=True, exist_ok=True)
    return path


# Full userspace boots (bootscope image build, run --image).
DEBIAN_MIRROR = "http://deb.debian.org/debian"
IMAGE_SUITE = "bookworm"
IMAGE_KERNEL = "debian:cloud"
IMAGE_SIZE = "2G"
IMAGE_MEM_MB = 1024  # systemd, udev and a Debian initramfs do not fit in 512 MiB comfortably
IMAGE_BUILD_TIMEOUT_S = 1800.0
# agetty (util-linux term-utils/agetty.c do_prompt()) prints "HOSTNAME login: " and no newline: the
# console reader cuts a line after it (BootConfig.prompt_regex), and the image variants' marker is it.
# agetty writes the host name and " login: " apart, so another writer on the console (the image's
# collector, a kernel message) can end the line between them: " login: " at a line's start counts.
LOGIN_PROMPT = r"(?:\S|^\r?) login: "
# bootscope-collect.service in the image prints systemd's accounting between these lines.
COLLECT_BEGIN = "BOOTSCOPE-SYSTEMD-BEGIN"
COLLECT_SECTION = "BOOTSCOPE-SYSTEMD-SECTION"
COLLECT_END = "BOOTSCOPE-SYSTEMD-END"
# The image's kernel command line besides root= (the partition-less disk, whose device depends on how
# it is attached: lab/qemu/disk.py): systemd's own log lines on the console with printk stamps
# (log_target=kmsg; printk.devkmsg=on lifts the kernel's rate limit on /dev/kmsg writers so no systemd
# line is dropped), no untimed status lines.
IMAGE_APPEND = "rw systemd.log_target=kmsg printk.devkmsg=on systemd.show_status=0"

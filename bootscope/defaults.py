"""Defaults in one place; every other module takes its configuration as arguments."""

from __future__ import annotations

from pathlib import Path

import platformdirs

SAMPLES_PER_VARIANT = 24  # seed 000: the reviewer asks for at least 24 samples
WARMUP_BOOTS = 1
ALPHA = 0.05
POWER = 0.80
BOOT_TIMEOUT_S = 120.0
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

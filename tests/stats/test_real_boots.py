"""A real A/A and A/B: the Debian cloud kernel booted in QEMU (TCG), interleaved, then compared."""

from __future__ import annotations

from pathlib import Path

import pytest

from bootscope.analyze import analyze_boot
from bootscope.model import Outcome
from bootscope.parse import parse_captured
from bootscope.sources.initramfs import InitramfsSpec, build_initramfs
from bootscope.sources.qemu import BootConfig, boot_once
from bootscope.stats.compare import SAME, Options, compare

BOOTS_PER_SIDE = 4  # the smallest n where an exact two-sided test can reach p < 0.05 (2/70)


def _kernel_init_s(kernel: Path, initrd: Path, append: str) -> float:
    boot = boot_once(BootConfig(kernel=kernel, initrd=initrd, append=append, stop_on_marker=True))
    assert boot.outcome == Outcome.OK, boot.reason
    value = analyze_boot(parse_captured(boot.lines).boots[0]).metrics.kernel_init_s
    assert value is not None
    return value


@pytest.mark.boot
def test_a_a_and_a_b_on_a_real_kernel(cloud_kernel: Path) -> None:
    initrd = build_initramfs(InitramfsSpec())
    # B prints every initcall on the 115200-baud serial console: a real, large slowdown, unlike
    # -smp 1 against -smp 4, whose difference the host's load drowned at 4 boots a side here.
    variants = {"quiet": "", "quiet-again": "", "chatty": "initcall_debug ignore_loglevel"}
    sides: dict[str, list[float]] = {name: [] for name in variants}
    # Interleaved (A A' B, A A' B, ...) so that host drift hits every side alike.
    for _ in range(BOOTS_PER_SIDE):
        for name, append in variants.items():
            sides[name].append(_kernel_init_s(cloud_kernel, initrd, append))
    options = Options(power=False, bootstrap_resamples=500)
    same = compare(sides["quiet"], sides["quiet-again"], "kernel_init_s", "s", options, "quiet", "again")
    differs = compare(sides["quiet"], sides["chatty"], "kernel_init_s", "s", options, "quiet", "chatty")
    assert same.verdict == SAME, sides
    assert differs.verdict == "slower", sides

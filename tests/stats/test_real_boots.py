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

# 6 a side: an exact two-sided Mann-Whitney test can reach p = 2/924 = 0.002, so the checks can run at
# alpha 0.01 and the A/A check fails by chance in at most 1 % of runs, not 5 %.
BOOTS_PER_SIDE = 6
ALPHA = 0.01
# Under -icount the guest clock counts instructions, so a loaded host (a CI machine running other tests)
# cannot drown the A/B difference; identical settings still differ by a fraction of a millisecond.
ICOUNT_SHIFT = 3


def _kernel_init_s(kernel: Path, initrd: Path, append: str) -> float:
    config = BootConfig(
        kernel=kernel, initrd=initrd, append=append, stop_on_marker=True, icount_shift=ICOUNT_SHIFT
    )
    boot = boot_once(config)
    assert boot.outcome == Outcome.OK, boot.reason
    value = analyze_boot(parse_captured(boot.lines).boots[0]).metrics.kernel_init_s
    assert value is not None
    return value


@pytest.mark.boot
def test_a_a_and_a_b_on_a_real_kernel(cloud_kernel: Path) -> None:
    initrd = build_initramfs(InitramfsSpec())
    # B prints every initcall on the serial console: real extra work for the kernel (about 1 500 more
    # console lines), unlike -smp 1 against -smp 4, which plain TCG timing on a loaded host drowned.
    variants = {"quiet": "", "quiet-again": "", "chatty": "initcall_debug ignore_loglevel"}
    sides: dict[str, list[float]] = {name: [] for name in variants}
    # Interleaved (A A' B, A A' B, ...) so that host drift hits every side alike.
    for _ in range(BOOTS_PER_SIDE):
        for name, append in variants.items():
            sides[name].append(_kernel_init_s(cloud_kernel, initrd, append))
    options = Options(alpha=ALPHA, power=False, bootstrap_resamples=500)
    same = compare(sides["quiet"], sides["quiet-again"], "kernel_init_s", "s", options, "quiet", "again")
    differs = compare(sides["quiet"], sides["chatty"], "kernel_init_s", "s", options, "quiet", "chatty")
    assert same.verdict == SAME, sides
    assert differs.verdict == "slower", sides

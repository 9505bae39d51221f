"""Fake targets the runner tests share (fast tests of bootscope's own logic beside the real boots)."""

from __future__ import annotations

from bootscope.lab.qemu.process import BootConfig
from bootscope.lab.targets.fake import FakeTarget


def interrupted_at(boot_number: int) -> FakeTarget:
    """Return a fake target whose ``boot_number``-th boot is cut by Ctrl-C (KeyboardInterrupt)."""
    target = FakeTarget()

    def before(_config: BootConfig) -> None:
        if target.boots + 1 == boot_number:
            raise KeyboardInterrupt

    target.before_boot = before
    return target

"""Latency places for tests: the real command place with a Ctrl-C in place of one run."""

from __future__ import annotations

from bootscope.lab.plans.latency import LatencyVariant
from bootscope.lab.targets.base import Target
from bootscope.lab.workloads.latency_place import CommandPlace, Measurement
from bootscope.lab.workloads.protocol import SlotRun


class CtrlCOnSecondRun:
    """The real command place (this host: the runner opens it for a local plan), with a Ctrl-C in
    place of the second run."""

    name = "local"

    def __init__(self) -> None:
        self.inner = CommandPlace()
        self.calls = 0

    def prepare(self, variant: LatencyVariant, target: Target, accel: str) -> list[str]:
        return self.inner.prepare(variant, target, accel)

    def measure(self, variant: LatencyVariant, run: SlotRun, target: Target) -> Measurement:
        self.calls += 1
        if self.calls == 2:
            raise KeyboardInterrupt
        return self.inner.measure(variant, run, target)

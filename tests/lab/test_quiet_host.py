"""`--quiet-host` with a real boot: it waits for a CPU hog to end before booting, and a boot that a
hog disturbs is re-run while the disturbed attempt stays stored, marked."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bootscope.lab import slots
from bootscope.lab.plans.boot import Plan, VariantSpec
from bootscope.lab.plans.schedule import Slot
from bootscope.lab.targets.qemu import LocalQemu
from bootscope.lab.workloads.boot import BootWorkload
from bootscope.store import BootRecord, Store
from bootscope.usecases import run as execute
from bootscope.usecases.summary import summarize

# It waits for an idle host and makes a load of its own: in `make test` it runs alone
# (scripts/lanes.py).
pytestmark = pytest.mark.alone

HOG = [sys.executable, "-c", "while True: pass"]


class _HogDuringFirstBoot:
    """A reporter that starts a CPU hog when the first boot attempt starts and stops it once that
    boot is stored (after bootscope measured the host's load), and notes when boots started."""

    def __init__(self) -> None:
        self.hog: subprocess.Popen[bytes] | None = None
        self.started_ns: list[int] = []

    def started(self, experiment_id: int, total: int, done: int) -> None:
        return None

    def boot_started(self, slot: Slot) -> None:
        self.started_ns.append(time.monotonic_ns())
        if len(self.started_ns) == 1:
            self.hog = subprocess.Popen(HOG)

    def boot_done(self, slot: Slot, record: BootRecord) -> None:
        if self.hog is not None:
            self.hog.kill()
            self.hog.wait()
            self.hog = None

    def note(self, message: str) -> None:
        return None

    def finished(self) -> None:
        self.boot_done(Slot(0, "", False, 0), BootRecord("", 0, False, "ok"))


@pytest.mark.boot
def test_quiet_host_waits_and_reruns_a_disturbed_boot(
    cloud_kernel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Bounded waits: the machine is shared, so "idle" may never come; the test must not hang on it.
    monkeypatch.setattr(slots, "IDLE_WAIT_S", 20.0)
    plan = Plan(
        variants=(VariantSpec("a", str(cloud_kernel)),),
        seed=1,
        samples_per_variant=1,
        warmup_per_variant=0,
        accel="tcg",
        quiet_host=True,
    )
    BootWorkload(plan).prepare(LocalQemu(), "tcg")  # kernel and initramfs cached before the clock matters
    reporter = _HogDuringFirstBoot()
    # 1. A hog runs when the run starts: the first boot waits until it has ended.
    early_hog = subprocess.Popen(HOG)
    hog_ended_ns: list[int] = []

    def end_early_hog() -> None:
        hog_ended_ns.append(time.monotonic_ns())
        early_hog.kill()
        early_hog.wait()

    timer = threading.Timer(3.0, end_early_hog)
    timer.start()
    try:
        with Store.open(tmp_path / "quiet.db") as store:
            result = execute.start_experiment(plan, store, reporter)  # type: ignore[arg-type]
            boots = store.boots(result.experiment.id)
            logs = store.logs(result.experiment.id)
    finally:
        timer.cancel()
        if early_hog.poll() is None:
            early_hog.kill()
            early_hog.wait()
    assert hog_ended_ns and reporter.started_ns[0] > hog_ended_ns[0]

    # 2. The hog that ran during the first attempt disturbed it: stored, marked, and re-run.
    first, *rest = boots
    assert (first.index, first.attempt) == (1, 0)
    assert first.disturbed and first.superseded and first.outcome == "ok"
    assert first.other_cpu_s is not None and first.other_cpu_s > 0.5
    assert rest and [b.attempt for b in rest] == list(range(1, len(rest) + 1))
    assert len(boots) <= slots.QUIET_HOST_ATTEMPTS
    # Only the last attempt counts; every attempt's console is kept.
    assert [b.superseded for b in boots] == [True] * (len(boots) - 1) + [False]
    assert all(logs[b.id] for b in boots if b.id is not None) and len(logs) == len(boots)
    (summary,) = summarize(boots, ["a"])
    assert summary.ok == 1 and summary.disturbed >= 1
    assert len(reporter.started_ns) == len(boots)

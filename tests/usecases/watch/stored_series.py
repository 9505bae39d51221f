"""Stored runs for the watch tests: one run per revision, labelled as `bootscope run --meta` does,
boots with given values (fast: the store's own API, no QEMU)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bootscope.model import Outcome
from bootscope.store import BootRecord, Store, VariantRecord

HOST = {
    "hostname": "lab1",
    "cpu_model": "Test CPU",
    "cores": 2,
    "qemu_version": "QEMU 7.2",
    "bootscope_version": "t",
}
CONFIG = {"kernel": "/builds/x/bzImage", "append": "", "smp": 1, "mem_mb": 512}


def store_revision(
    store: Store,
    revision: str,
    values: Sequence[float],
    *,
    metric: str = "kernel_init_s",
    time_s: float | None = None,
    host: Mapping[str, object] = HOST,
    config: Mapping[str, object] = CONFIG,
    meta: Mapping[str, str] | None = None,
) -> int:
    """Store one run of ``revision`` whose counted boots have ``values`` of ``metric``; return its id."""
    labels = {
        "revision": revision,
        **({"revision_time": str(time_s)} if time_s is not None else {}),
        **(meta or {}),
    }
    record = store.create_experiment(
        plan={"workload": "boot"}, seed=1, accel="tcg", accel_reason="test", host=dict(host),
        variants=[VariantRecord("a", dict(config))], meta=labels,
    )  # fmt: skip
    for index, value in enumerate(values):
        store.record_boot(
            record.id,
            BootRecord(
                variant="a",
                index=index,
                warmup=False,
                outcome=Outcome.OK,
                kernel_release="6.1.0",
                metrics={metric: value},
            ),
            [],
        )
    return record.id


def store_planted_revision(
    store: Store,
    revision: str,
    source_lines: Sequence[str],
    boots: int,
    seed: int,
    *,
    time_s: float,
    slower_us: Mapping[str, int] | None = None,
) -> int:
    """Store one run of ``revision`` whose ``boots`` boots are synthetic boots of a real log
    (``tests/planted_logs.py``: silences scaled by seeded noise, the initcalls of ``slower_us`` made
    slower), with their console lines and kernel_init_s as a real run stores them; return its id."""
    from bootscope.analyze.captured import analyze_captured
    from bootscope.metrics import KERNEL_INIT_S
    from bootscope.model import LogLine
    from tests.planted_logs import planted_boot

    record = store.create_experiment(
        plan={"workload": "boot"}, seed=seed, accel="tcg", accel_reason="test", host=dict(HOST),
        variants=[VariantRecord("a", dict(CONFIG))],
        meta={"revision": revision, "revision_time": str(time_s)},
    )  # fmt: skip
    for index in range(boots):
        text = planted_boot(source_lines, seed * 100 + index, slower_us=slower_us)
        captured = [LogLine(line) for line in text.splitlines()]
        value = analyze_captured(captured, host_start_ns=None).breakdown.metrics.kernel_init_s
        record_boot = BootRecord(
            variant="a", index=index, warmup=False, outcome=Outcome.OK, kernel_release="6.1.0",
            metrics={KERNEL_INIT_S: value},
        )  # fmt: skip
        store.record_boot(record.id, record_boot, captured)
    return record.id

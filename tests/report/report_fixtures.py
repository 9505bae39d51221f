"""Boots for the report and browser tests: a small one built by hand with hostile text, real ones,
and a stored run built from the real logs."""

from __future__ import annotations

from pathlib import Path

from bootscope.model import (
    Breakdown,
    CpuBringup,
    CpuBringupSummary,
    Gap,
    Identity,
    Initcall,
    InitcallSummary,
    LogLine,
    Metrics,
    Phase,
)
from bootscope.usecases.view_types import BootView

HOSTILE = "evil: <script>alert(1)</script> </script> \"quoted\" 'single' & \x07bell\x1b[0m \u2028sep"

_LINES = (
    ("SeaBIOS (version 1.16.2)", None),
    ("Linux version 6.1.0-56-cloud-amd64", 0.0),
    ("calling  con_init+0x0/0x22c @ 0", 0.10),
    ("initcall con_init+0x0/0x22c returned 0 after 1000 usecs", 0.101),
    ("smp: Bringing up secondary CPUs ...", 0.20),
    ("smpboot: CPU 1 is now up", 0.25),
    ("calling  slow_init+0x0/0x10 @ 1", 0.30),
    ("initcall slow_init+0x0/0x10 returned 0 after 500000 usecs", 0.80),
    ("calling  async_probe+0x0/0x10 @ 77", 0.40),
    (HOSTILE, 0.45),
    ("initcall async_probe+0x0/0x10 returned -19 after 200000 usecs", 0.60),
    ("Freeing unused kernel image (initmem) memory: 2612K", 2.50),
    ("Run /init as init process", 2.60),
    ("BOOTSCOPE-MARKER init uptime=2.90", None),
)


def hand_view(label: str = "hand", scale: float = 1.0) -> BootView:
    """A small boot whose numbers are known: 3 initcalls (one async, one failing), 1 CPU, 2 phases."""
    lines = tuple(LogLine(text, None if t is None else t * scale) for text, t in _LINES)
    calls = (
        Initcall("con_init", 0.10 * scale, int(1000 * scale), 0, pid=0),
        Initcall("slow_init", 0.30 * scale, int(500000 * scale), 0, pid=1),
        Initcall("async_probe", 0.40 * scale, int(200000 * scale), -19, pid=77),
    )
    bd = Breakdown(
        identity=Identity(release="6.1.0-56-cloud-amd64", cmdline="console=ttyS0 " + HOSTILE, cpus=2),
        metrics=Metrics(kernel_init_s=2.60 * scale, userspace_s=2.90 * scale),
        milestones={"kernel start": 0.0, "run init": 2.60 * scale},
        phases=(
            Phase("early", 0.0, 0.20 * scale, 0.20 * scale, 0.2 / 2.6),
            Phase("initcalls", 0.20 * scale, 2.60 * scale, 2.40 * scale, 2.4 / 2.6),
        ),
        gaps=(
            Gap(
                0.80 * scale,
                1.70 * scale,
                "initcall slow_init+0x0/0x10 returned 0 after 500000 usecs",
                "Freeing",
            ),
            Gap(0.60 * scale, 0.20 * scale, HOSTILE, "x"),
        ),
        initcalls=InitcallSummary(
            count=3, total_s=0.701 * scale, failed=(calls[2],), unfinished=(), top=calls, all=calls
        ),
        cpu_bringup=CpuBringupSummary(
            cpus=(CpuBringup(1, 0.20 * scale, 0.05 * scale),), serial_s=0.05 * scale, parallel_estimate_s=None
        ),
        first_s=0.0,
        last_s=2.60 * scale,
        line_count=len(lines),
        timed_line_count=sum(1 for line in lines if line.guest_s is not None),
        warnings=(HOSTILE,),
    )
    return BootView(label, bd, lines)


def real_views(path: Path) -> list[BootView]:
    """The boots of a real log in tests/data, parsed and analysed by the real stages."""
    from bootscope.usecases.views import boots_from_logs

    return boots_from_logs([path])


def make_stored_run(tmp_path: Path, smp1_view: BootView, smp4_view: BootView) -> Path:
    """A SQLite store holding one run of two variants (smp1, smp4) built from the real logs, with
    metric values spread around each log's own value and one failed boot."""
    from bootscope.store.db import Store
    from bootscope.store.records import BootRecord, VariantRecord

    db = tmp_path / "run.db"
    with Store.open(db) as store:
        exp = store.create_experiment(
            plan={"samples": 6},
            seed=7,
            accel="tcg",
            accel_reason="KVM disabled by test",
            host={"cpus": 2, "name": "test <host>"},
            variants=(VariantRecord("smp1"), VariantRecord("smp4")),
        )
        index = 0
        for k in range(6):
            for name, view in (("smp1", smp1_view), ("smp4", smp4_view)):
                base = view.breakdown.metrics.kernel_init_s
                assert base is not None
                metrics = {"kernel_init_s": base + 0.01 * k, "userspace_s": base + 0.1 + 0.01 * k}
                record = BootRecord(
                    variant=name,
                    index=index,
                    warmup=False,
                    outcome="ok",
                    metrics=metrics,
                    command=("qemu-system-x86_64", "-accel", "tcg"),
                    kernel_release="6.1.0-56-cloud-amd64",
                )
                store.record_boot(
                    exp.id,
                    record,
                    [
                        LogLine(line.text)
                        if line.guest_s is None
                        else LogLine(f"[{line.guest_s:12.6f}] {line.text}")
                        for line in view.lines
                    ],
                )
                index += 1
        failed = BootRecord(
            variant="smp4",
            index=index,
            warmup=False,
            outcome="timeout",
            reason="no marker after 120 s <b>",
            metrics={},
        )
        store.record_boot(exp.id, failed, [LogLine("SeaBIOS")])
    return db

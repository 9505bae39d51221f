"""The store behind the serve tests, made once per test session: one run of two variants built from
two real Debian boot logs (every line kept, a hostile line added), a watched series of 30 revisions
with a planted step of +100 ms at r21 (alerted by the real watch rule), and two real logs imported
as a fleet. Fast: the store's own API, no QEMU."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "usecases" / "watch"))
from stored_series import store_revision

from bootscope.model import LogLine
from bootscope.store import BootRecord, Store, VariantRecord
from bootscope.usecases.views import boots_from_logs
from bootscope.usecases.watch.alerts import recompute

DATA = Path(__file__).resolve().parents[1] / "data"
HOSTILE = 'evil <script>alert(1)</script> </script> <img src=x onerror=alert(2)> & "q"'
STEP_AT = 21
STEP_S = 0.100
REVISIONS = 30
BOOTS_PER_REVISION = 6


def revision(number: int) -> str:
    """The name of revision ``number`` (1-based) of the watched series."""
    return f"r{number:02d}"


def store_real_run(store: Store) -> int:
    """Store one run of variants smp1 and smp4, 6 boots each from the real logs (kernel_init_s the
    log's own, plus 10 ms per boot), one failed boot; return its id."""
    views = {
        "smp1": boots_from_logs([DATA / "debian-6.1-cloud-initcall-smp1.log"])[0],
        "smp4": boots_from_logs([DATA / "debian-6.1-cloud-initcall-smp4.log"])[0],
    }
    exp = store.create_experiment(
        plan={"samples": 6, "workload": "boot"}, seed=7, accel="tcg", accel_reason="test",
        host={"cpus": 2, "name": "lab <host>"}, variants=(VariantRecord("smp1"), VariantRecord("smp4")),
        meta={"note": HOSTILE},
    )  # fmt: skip
    index = 0
    for k in range(6):
        for name, view in views.items():
            base = view.breakdown.metrics.kernel_init_s
            assert base is not None
            lines = [
                LogLine(line.text) if line.guest_s is None else LogLine(f"[{line.guest_s:12.6f}] {line.text}")
                for line in view.lines
            ]
            lines.insert(5, LogLine(HOSTILE))
            record = BootRecord(
                variant=name, index=index, warmup=False, outcome="ok",
                metrics={"kernel_init_s": base + 0.01 * k}, kernel_release="6.1.0-56-cloud-amd64",
            )  # fmt: skip
            store.record_boot(exp.id, record, lines)
            index += 1
    failed = BootRecord(variant="smp4", index=index, warmup=False, outcome="timeout", reason="no marker <b>")
    store.record_boot(exp.id, failed, [LogLine("SeaBIOS")])
    return exp.id


def store_watched_series(store: Store) -> None:
    """Store 30 revisions of one machine's kernel_init_s (spread +-5 ms, +100 ms from r21 on) and
    judge them with the real watch rule."""
    for number in range(1, REVISIONS + 1):
        level = 1.0 + (STEP_S if number >= STEP_AT else 0.0)
        values = [level + 0.002 * ((number * 7 + k * 3) % 5 - 2) for k in range(BOOTS_PER_REVISION)]
        store_revision(store, revision(number), values, time_s=1.7e9 + 3600.0 * number)
    recompute(store, now_s=1.7e9 + 3600.0 * (REVISIONS + 1))


FLEET_LOGS = ("debian-6.1-cloud-smp2.log", "debian-6.12-cloud-smp2.log", "debian-6.1-cloud-initcall-smp4.log")


def build(target: str) -> int:
    """Fill the store ``target`` (a SQLite path or a database URL); return the real run's id."""
    from bootscope.usecases.fleet.importer import import_into

    with Store.open(target) as store:
        run = store_real_run(store)
        store_watched_series(store)
    import_into(target, None, [str(DATA / name) for name in FLEET_LOGS], None, 1)
    return run

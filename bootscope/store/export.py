"""Write an experiment out: one JSON document with every boot and its log, or a CSV of the boots.

The JSON shape (issue 3): ``{"experiment": {"id", "created", "plan", "seed", "accel", "host", ...},
"boots": [{"variant", "index", "warmup", "outcome", "reason", "metrics": {...}, "log": [[host_ns,
text], ...], ...}]}``. Metric values are seconds; a metric a boot did not reach is null.
"""

from __future__ import annotations

import csv
import io
from typing import TYPE_CHECKING, Any

from bootscope.metrics import EXPORT_METRICS
from bootscope.store.records import BootRecord

if TYPE_CHECKING:
    from bootscope.store.db import Store

_CSV_FIELDS = (
    "experiment",
    "variant",
    "index",
    "attempt",
    "warmup",
    "outcome",
    "reason",
    "disturbed",
    "superseded",
    "other_cpu_s",
    "steal_s",
    "accel",
    "kernel_release",
    "host_start_ns",
    "started_at",
)


def _metric_names(boots: list[BootRecord]) -> list[str]:
    extra = sorted({name for boot in boots for name in boot.metrics} - set(EXPORT_METRICS))
    return [*EXPORT_METRICS, *extra]


def export_document(store: Store, exp_id: int | str) -> dict[str, Any]:
    """Return the experiment ``exp_id`` (or ``"latest"``) as a JSON-able dict with every boot attempt
    and its full log; raises StoreError if it does not exist or the database fails."""
    record = store.experiment(exp_id)
    boots = store.boots(record.id)
    logs = store.logs(record.id)
    names = _metric_names(boots)
    return {
        "experiment": {
            "id": record.id,
            "created": record.created,
            "plan": dict(record.plan),
            "seed": record.seed,
            "accel": record.accel,
            "accel_reason": record.accel_reason,
            "host": dict(record.host),
            "status": record.status,
            "variants": [{"name": v.name, "config": dict(v.config)} for v in record.variants],
        },
        "boots": [
            {
                "variant": boot.variant,
                "index": boot.index,
                "attempt": boot.attempt,
                "warmup": boot.warmup,
                "outcome": boot.outcome,
                "reason": boot.reason,
                "disturbed": boot.disturbed,
                "superseded": boot.superseded,
                "other_cpu_s": boot.other_cpu_s,
                "steal_s": boot.steal_s,
                "accel": boot.accel,
                "command": list(boot.command),
                "kernel_release": boot.kernel_release,
                "host_start_ns": boot.host_start_ns,
                "started_at": boot.started_at,
                "placement": dict(boot.placement),
                "metrics": {name: boot.metrics.get(name) for name in names},
                "log": [[line.host_ns, line.text] for line in logs.get(boot.id or -1, [])],
            }
            for boot in boots
        ],
    }


def export_csv(store: Store, exp_id: int | str) -> str:
    """Return CSV text (header row first) with one row per boot attempt of ``exp_id`` (or
    ``"latest"``) and one column per metric in seconds, empty where not reached; raises StoreError."""
    record = store.experiment(exp_id)
    boots = store.boots(record.id)
    names = _metric_names(boots)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*_CSV_FIELDS, *names])
    for boot in boots:
        row: list[object] = [
            record.id,
            boot.variant,
            boot.index,
            boot.attempt,
            int(boot.warmup),
            boot.outcome,
            boot.reason,
            int(boot.disturbed),
            int(boot.superseded),
            "" if boot.other_cpu_s is None else boot.other_cpu_s,
            "" if boot.steal_s is None else boot.steal_s,
            boot.accel,
            boot.kernel_release or "",
            "" if boot.host_start_ns is None else boot.host_start_ns,
            boot.started_at or "",
        ]
        for name in names:
            value = boot.metrics.get(name)
            row.append("" if value is None else repr(value))
        writer.writerow(row)
    return out.getvalue()

"""Write bench/data/real_boot_noise.csv: the counted boots of a stored run, one row per boot and metric
(the noise `bench/watch_labelled.py` and `bench/watch_bench.py` resample).

Run: .venv/bin/python -m bench.noise_export DB RUN [--note TEXT]
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = Path(__file__).with_name("data") / "real_boot_noise.csv"


def main() -> None:
    """Export the run's boot values with a provenance line."""
    parser = argparse.ArgumentParser()
    parser.add_argument("db")
    parser.add_argument("run", type=int)
    parser.add_argument("--note", default="")
    parser.add_argument("--output", type=Path, default=OUT)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from bootscope.store import Store

    with Store.open(args.db, create=False) as store:
        record = store.experiment(args.run)
        boots = [b for b in store.boots(record.id) if b.counts]
    host = record.host
    with args.output.open("w", encoding="utf-8", newline="") as handle:
        handle.write(
            f"# source: real boots stored by `bootscope run` (run {record.id}, {record.created}), QEMU"
            f" {record.accel} on {host.get('cpu_model')} ({host.get('cores')} cores),"
            f" {host.get('qemu_version')};"
            f" {args.note}\n"
        )
        writer = csv.writer(handle)
        writer.writerow(["group", "boot", "value"])
        for boot in boots:
            for metric, value in sorted(boot.metrics.items()):
                if value is not None:
                    writer.writerow([f"{boot.variant}/{metric}", boot.index, repr(float(value))])


if __name__ == "__main__":
    main()

"""Boots per minute on Dask: a `dask scheduler` and 1 or 2 `bootscope worker` processes on loopback
(one core each), real TCG boots of a kernel to bootscope's marker, and the executor's own cost per
slot on the fake target.

For each worker count it runs ``--n`` boots per variant x 2 variants with ``--executor`` and reports
boots per minute two ways: over the whole run (connecting, choosing the accelerator and preparing on
a worker included) and in the steady state (from the first boot's start to the last boot's start,
from the stored ``started_at`` stamps). The overhead row: ``--fake`` slots of the fake target (a
boot costs nothing) on one worker, wall ms per slot: Dask's round trip plus the store write.

Usage: ``python -m bench.dask_bench --kernel PATH [--n 3] [--fake 200]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.results import write_section
from bootscope.lab.executors.dask import dask_executor
from bootscope.lab.plans.boot import Plan, VariantSpec
from bootscope.lab.targets.fake import FakeTarget
from bootscope.store import Store
from bootscope.usecases.run import start_experiment

_WORKER_LINE = re.compile(r"bootscope worker: worker (tcp://\S+):")


def _start(root: Path, workers: int) -> tuple[str, list[subprocess.Popen[bytes]]]:
    """Start a scheduler and ``workers`` workers (worker k on core k); return the address and processes."""
    file = root / "scheduler.json"
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
             "--scheduler-file", str(file), "--no-dashboard"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
    ]  # fmt: skip
    while not file.exists() or not file.read_text().rstrip().endswith("}"):
        time.sleep(0.1)
    address = str(json.loads(file.read_text())["address"])
    for core in range(workers):
        log = root / f"w{core}.log"
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "bootscope", "worker", address, "--cores", str(core)],
                stdout=subprocess.DEVNULL, stderr=log.open("wb"),
            )
        )  # fmt: skip
        while not _WORKER_LINE.search(log.read_text(errors="replace")):
            time.sleep(0.1)
    return address, procs


def _stop(procs: Sequence[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


def _plan(kernel: str, n: int) -> Plan:
    return Plan(
        variants=(VariantSpec("a", kernel, mem_mb=256), VariantSpec("b", kernel, mem_mb=256, append="quiet")),
        seed=1,
        samples_per_variant=n,
        warmup_per_variant=0,
        accel="tcg",
    )


def measure(kernel: str, n: int, workers: int) -> dict[str, Any]:
    """Return boots per minute over the whole run and in the steady state, with ``workers`` workers."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        address, procs = _start(root, workers)
        try:
            started = time.monotonic()
            with dask_executor(address) as executor, Store.open(root / "b.db") as store:
                result = start_experiment(_plan(kernel, n), store, executor=executor)
                wall_s = time.monotonic() - started
                boots = store.boots(result.experiment.id)
        finally:
            _stop(procs)
    starts = sorted(datetime.fromisoformat(b.started_at or "").timestamp() for b in boots)
    steady_s = starts[-1] - starts[0]
    return {
        "boots": len(boots),
        "wall_s": wall_s,
        "per_min": len(boots) * 60 / wall_s,
        "steady_per_min": (len(boots) - workers) * 60 / steady_s if steady_s > 0 else float("nan"),
        "ok": sum(b.outcome == "ok" for b in boots),
        "failed": "; ".join(f"{b.index} {b.outcome}: {b.reason[:80]}" for b in boots if b.outcome != "ok"),
    }


def overhead_ms(slots: int) -> float:
    """Return wall ms per slot of the fake target on one worker (Dask round trip and store write)."""
    plan = Plan(variants=(VariantSpec("a", "k"), VariantSpec("b", "k")), seed=1,
                samples_per_variant=slots // 2, warmup_per_variant=0, accel="tcg")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        address, procs = _start(Path(tmp), 1)
        try:
            with (
                dask_executor(address, target_factory=FakeTarget) as executor,
                Store.open(Path(tmp) / "f.db") as store,
            ):
                start_experiment(plan, store, executor=executor)  # warm: imports, preparation
                started = time.monotonic()
                result = start_experiment(plan, store, executor=executor)
                return (time.monotonic() - started) * 1000 / result.boots_run
        finally:
            _stop(procs)


def main(argv: Sequence[str] = ()) -> None:
    """Measure 1 and 2 workers and the per-slot overhead; print and record them in RESULTS.md."""
    parser = argparse.ArgumentParser(prog="python -m bench.dask_bench")
    parser.add_argument("--kernel", required=True, help="bzImage to boot")
    parser.add_argument("--n", type=int, default=3, help="boots per variant (2 variants)")
    parser.add_argument("--fake", type=int, default=200, help="fake slots for the overhead row")
    parser.add_argument("--repeat", type=int, default=1, help="runs per worker count (order 1,2,2,1,...)")
    args = parser.parse_args(list(argv))
    load = os.getloadavg()[0]
    rows = []
    # 1, 2, 2, 1, ...: a host whose load drifts (other sessions) hits both worker counts alike.
    order = [w for k in range(args.repeat) for w in ((1, 2) if k % 2 == 0 else (2, 1))]
    for workers in order:
        row = measure(args.kernel, args.n, workers)
        row["load_1m"] = os.getloadavg()[0]
        print(f"{workers} worker(s): {row}", flush=True)
        rows.append((workers, row))
    fake_ms = overhead_ms(args.fake)
    print(f"overhead: {fake_ms:.1f} ms per fake slot", flush=True)
    lines = [
        "## dask",
        "",
        "`--executor dask://` on this machine (2 cores, shared with other sessions: load average"
        f" {load:.1f} at the start), `python -m bench.dask_bench --kernel PATH --n {args.n}"
        f" --fake {args.fake} --repeat {args.repeat}`: a `dask scheduler` and 1 or 2"
        " `bootscope worker --cores K` processes on loopback, 2 variants x"
        f" {args.n} TCG boots of the Debian cloud kernel to bootscope's marker (256 MiB, one vCPU).",
        "",
        "| workers | boots (ok) | run wall s | boots per minute, whole run | boots per minute, steady"
        " | load average after |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for workers, row in rows:
        lines.append(
            f"| {workers} | {row['boots']:.0f} ({row['ok']:.0f}) | {row['wall_s']:.1f} | {row['per_min']:.2f}"
            f" | {row['steady_per_min']:.2f} | {row['load_1m']:.1f} |"
        )
    for workers in (1, 2):
        rates = [row["per_min"] for w, row in rows if w == workers]
        lines.append(f"\nMedian boots per minute, {workers} worker(s): {statistics.median(rates):.2f}.")
    lines += [
        "",
        f"Executor overhead: {fake_ms:.1f} ms wall per slot with the fake target on one worker ({args.fake}"
        " slots: the Dask round trip, the slot loop on the worker, the store write on the client).",
        "",
    ]
    write_section("dask", "\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])

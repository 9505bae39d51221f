"""Benchmark of the fleet commands at scale (issue 16), on a SYNTHETIC fleet (bench/fleet_gen.py).

Run: nice -n 10 .venv/bin/python -m bench.fleet_bench [--logs 10000] [--boots 1000000] [--dir DIR]

1. ``fleet import`` of ``--logs`` generated logs (real logs of tests/data with per-host perturbed
   timestamps, planted regressions, 1 % failed boots, 0.2 % junk files) with their metadata CSV,
   as a child process on every core: wall time and the peak of the summed RSS of the process tree
   (the importer and its pool workers), sampled every 0.2 s from /proc.
2. ``fleet summary --by model,kernel`` over ``--boots`` stored boots: the boots are written straight
   into a fresh store (synthetic values; analysing a million logs is what step 1 measures per log),
   then the summary runs twice as a child process: the first run also writes the Parquet copy, the
   second finds it up to date. Then ``fleet outliers`` and ``fleet compare`` once each.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from bench.fleet_gen import make_fleet

ROOT = Path(__file__).resolve().parents[1]


def _children(pid: int) -> list[int]:
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found.extend(int(p) for p in handle.read().split())
    except OSError:
        pass
    return found


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cpu_s(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    except (OSError, IndexError, ValueError):
        return 0.0


CPU_SEEN: dict[int, float] = {}


def timed(args: list[str]) -> tuple[float, float, str]:
    """Run ``bootscope ARGS`` as a child; return (wall s, peak summed RSS of its tree in MiB, stdout).
    The CPU seconds its processes used (as last sampled, every 0.2 s) are left in CPU_SEEN."""
    CPU_SEEN.clear()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "bootscope", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    peak = [0]

    def sample() -> None:
        while child.poll() is None:
            tree, todo = [], [child.pid]
            while todo:
                pid = todo.pop()
                tree.append(pid)
                todo.extend(_children(pid))
            peak[0] = max(peak[0], sum(_rss_kb(pid) for pid in tree))
            for pid in tree:
                CPU_SEEN[pid] = max(CPU_SEEN.get(pid, 0.0), _cpu_s(pid))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = child.communicate()
    wall = time.perf_counter() - started
    sampler.join()
    if child.returncode not in (0, 1):
        raise SystemExit(f"bootscope {' '.join(args)} failed ({child.returncode}): {err.strip()}")
    return wall, peak[0] / 1024, out


def _fill(db: str, boots: int, seed: int) -> float:
    """Write ``boots`` synthetic boots (8 models x 4 kernels, 3 cohorts) into ``db``; return seconds."""
    sys.path.insert(0, str(ROOT))
    from bootscope.store import Store
    from bootscope.store.fleet import FleetBoot, FleetFile, record_files

    rng = np.random.default_rng(seed)
    per_file = 100
    models = [f"model-{i}" for i in range(8)]
    kernels = ["6.1.190", "6.1.191", "6.1.192", "6.6.60"]
    cohorts = ["control", "canary", "canary-b"]
    started = time.perf_counter()
    with Store.open(db) as store:
        batch = []
        for f in range(boots // per_file):
            model, kernel = models[f % 8], kernels[(f // 8) % 4]
            cohort = cohorts[int(rng.integers(0, 3))]
            base = 1.5 + 0.3 * (f % 8) + (0.2 if (cohort == "canary" and model == "model-3") else 0.0)
            values = base * np.exp(rng.normal(0, 0.05, per_file))
            failed = rng.random(per_file) < 0.01
            meta = {"host": f"h{f:06d}", "model": model, "kernel": kernel, "cohort": cohort}
            batch.append(
                FleetFile(
                    path=f"synthetic/{f}.log",
                    sha256=f"{seed:08x}{f:056x}",
                    format="dmesg",
                    meta=meta,
                    boots=tuple(
                        FleetBoot(b + 1, "failed", "synthetic")
                        if failed[b]
                        else FleetBoot(b + 1, "ok", metrics={"kernel_init_s": float(values[b])})
                        for b in range(per_file)
                    ),
                )
            )
            if len(batch) == 200:
                record_files(store, batch)
                batch = []
        record_files(store, batch)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=10_000)
    parser.add_argument("--boots", type=int, default=1_000_000)
    parser.add_argument("--dir", type=Path, default=None, help="work directory (default: a temp dir)")
    args = parser.parse_args()
    work = args.dir or Path(tempfile.mkdtemp(prefix="bootscope-fleet-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[str, str]] = []
    try:
        if args.logs:
            fleet = work / "fleet"
            started = time.perf_counter()
            meta = make_fleet(fleet, args.logs, seed=1)
            size = sum(p.stat().st_size for p in fleet.rglob("*.log"))
            rows.append(
                (f"generate {args.logs} logs", f"{time.perf_counter() - started:.1f} s, {size / 1e9:.2f} GB")
            )
            db = str(work / "import.db")
            wall, rss, out = timed(["fleet", "import", str(fleet), "--meta", str(meta), "--db", db])
            rows.append(
                (
                    f"fleet import of {args.logs} logs ({os.cpu_count()} workers)",
                    f"{wall:.1f} s, peak RSS {rss:.0f} MiB",
                )
            )
            cpu = sum(CPU_SEEN.values())
            rows.append(
                (
                    "CPU seconds of the import's processes (all cores)",
                    f"{cpu:.0f} s, {cpu / args.logs * 1000:.1f} ms per log",
                )
            )
            rows.append(("import said", out.strip().splitlines()[0]))
            wall, rss, _ = timed(["fleet", "import", str(fleet), "--meta", str(meta), "--db", db])
            rows.append(
                ("the same import again (all already stored)", f"{wall:.1f} s, peak RSS {rss:.0f} MiB")
            )
        if args.boots:
            db = str(work / "million.db")
            if Path(db).exists():  # --dir of an earlier run: the same boots (same seed) are there
                rows.append((f"{args.boots} synthetic boots", f"already in {db}"))
            else:
                seconds = _fill(db, args.boots, 2)
                rows.append((f"write {args.boots} synthetic boots into the store", f"{seconds:.1f} s"))
            query = ["--db", db, "--format", "json"]
            commands = [
                (
                    "summary --by model,kernel (first: writes the Parquet copy)",
                    ["summary", "--by", "model,kernel"],
                ),
                ("summary --by model,kernel (copy up to date)", ["summary", "--by", "model,kernel"]),
                ("outliers --by model", ["outliers", "--by", "model"]),
                (
                    "compare --strata model",
                    ["compare", "--canary", "canary", "--control", "control", "--strata", "model"],
                ),
            ]
            for label, command in commands:
                wall, rss, _ = timed(["fleet", *command, *query])
                cpu = sum(CPU_SEEN.values())
                rows.append(
                    (
                        f"fleet {label}, {args.boots} boots",
                        f"{wall:.2f} s ({cpu:.1f} CPU s), peak RSS {rss:.0f} MiB",
                    )
                )
    finally:
        if args.dir is None:
            shutil.rmtree(work, ignore_errors=True)
    load = str(os.getloadavg())
    rows.append(("load average at the end (1, 5, 15 min; 2 cores shared with other work)", load))
    print("| what | result |\n| --- | --- |")
    for what, result in rows:
        print(f"| {what} | {result} |")


if __name__ == "__main__":
    main()

"""Benchmark of `bootscope analyze --json` on a ~200 MB multi-boot log built from tests/data.

Run: .venv/bin/python -m bench.analyze_bench [--mb 200] [--runs 3]
Prints throughput (MB/s of input, wall and CPU) and peak RSS of the child process (median of runs).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
LOGS = (
    "debian-6.1-cloud-smp2.log",
    "debian-6.1-cloud-initcall-smp1.log",
    "debian-6.1-cloud-initcall-smp4.log",
)


def build_log(path: Path, size_mb: int) -> int:
    """Write real console logs back to back until ``size_mb`` MiB; return the size in bytes."""
    parts = [(DATA / name).read_bytes() for name in LOGS]
    written = 0
    with path.open("wb") as out:
        while written < size_mb * 1024 * 1024:
            for part in parts:
                out.write(part)
                written += len(part)
    return written


def run_once(path: Path) -> tuple[float, float, int]:
    """Return (wall s, CPU s, peak RSS KiB) of one `bootscope analyze --json` child."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "bootscope", "analyze", "--json", str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, after.ru_maxrss


def main(argv: list[str] | None = None) -> dict[str, float]:
    """Run the benchmark, print and return its medians."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "multi.log"
        size = build_log(path, args.mb)
        runs = [run_once(path) for _ in range(args.runs)]
    result = {
        "input_mb": size / 1e6,
        "wall_s": statistics.median(r[0] for r in runs),
        "cpu_s": statistics.median(r[1] for r in runs),
        "peak_rss_mb": max(r[2] for r in runs) / 1024,
        "load_avg_1m": os.getloadavg()[0],
    }
    result["mb_per_s_wall"] = result["input_mb"] / result["wall_s"]
    result["mb_per_s_cpu"] = result["input_mb"] / result["cpu_s"]
    for key, value in result.items():
        print(f"analyze {key}: {value:.2f}")
    return result


if __name__ == "__main__":
    main()

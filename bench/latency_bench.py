"""Benchmark of `bootscope latency`: the overhead `latency run local` adds to one cyclictest run, and
the speed and memory of `latency analyze` on a 10^8-cycle histogram file.

Run: .venv/bin/python -m bench.latency_bench [--runs 5] [--duration 3] [--buckets 10000]
Overhead: bare ``cyclictest -m -S -p 95 -i 200 -D Ns -h 400 -q`` against ``bootscope latency run local
--duration Ns -n 1`` (a fresh store each time: start-up, store, facts, /proc/interrupts twice, the
analysis and the printout included), interleaved, wall time of each; medians side by side.
Parsing: a cyclictest ``-h`` text file with two threads of 5 x 10^7 cycles each over ``--buckets``
buckets (synthetic, seeded) read by ``bootscope latency analyze --format json`` in a child process;
wall time and the child's peak RSS, median over the runs.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CYCLES_PER_THREAD = 5 * 10**7


def _timed(argv: list[str]) -> tuple[float, float]:
    """Run argv; return wall seconds and the peak RSS (MiB) of the largest child so far."""
    start = time.monotonic()
    subprocess.run(argv, check=True, capture_output=True, cwd=ROOT)
    wall = time.monotonic() - start
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def write_histogram(path: Path, buckets: int, seed: int = 1) -> int:
    """Write a two-thread cyclictest -q -h file of 10^8 cycles in all; return the cycles written."""
    rng = np.random.default_rng(seed)
    hists = []
    for _ in range(2):
        p = np.exp(-np.arange(buckets + 1) / 8.0) + 1e-9
        hists.append(rng.multinomial(CYCLES_PER_THREAD, p / p.sum()))
    with path.open("w") as out:
        out.write("# /dev/cpu_dma_latency set to 0us\n# Histogram\n")
        for i in range(buckets):
            out.write(f"{i:06d} {hists[0][i]:06d}\t{hists[1][i]:06d}\n")
        out.write(f"# Total: {CYCLES_PER_THREAD:09d} {CYCLES_PER_THREAD:09d}\n")
        out.write("# Min Latencies: 00000 00000\n# Avg Latencies: 00008 00008\n")
        out.write(f"# Max Latencies: {buckets + 5:05d} {buckets + 5:05d}\n")
        out.write(f"# Histogram Overflows: {hists[0][buckets]:05d} {hists[1][buckets]:05d}\n")
    return 2 * CYCLES_PER_THREAD


def parse_in_process(buckets: int, runs: int) -> str:
    """Return a table row: median in-process time to parse and summarize the 10^8-cycle file."""
    from bootscope.analyze.latency import summarize_run
    from bootscope.parse.latency import parse_latency_text

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "hist.txt"
        write_histogram(path, buckets)
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            summarize_run(parse_latency_text(path.read_text(), "bench"))
            times.append(time.perf_counter() - start)
    median_ms = statistics.median(times) * 1000
    return f"| parse + quantiles in process (no start-up), same file | {median_ms:.0f} ms |"


def main() -> None:
    """Print both benchmarks as markdown table rows."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--duration", type=int, default=3)
    parser.add_argument("--buckets", type=int, default=10000)
    parser.add_argument("--parse-only", action="store_true", help="Skip the cyclictest runs.")
    args = parser.parse_args()
    if args.parse_only:
        print(parse_in_process(args.buckets, args.runs))
        return
    python = sys.executable
    seconds = f"{args.duration}s"
    bare_argv = ["cyclictest", "-m", "-S", "-p", "95", "-i", "200", "-D", seconds, "-h", "400", "-q"]
    bare: list[float] = []
    ours: dict[int, list[float]] = {1: [], 3: []}
    with tempfile.TemporaryDirectory() as scratch:
        for k in range(args.runs):
            bare.append(_timed(bare_argv)[0])
            for n in ours:
                db = Path(scratch) / f"run{k}-{n}.db"
                run_argv = [python, "-m", "bootscope", "latency", "run", "local", "--duration", seconds]
                run_argv += ["-n", str(n), "--db", str(db), "--format", "json", "--seed", str(k)]
                ours[n].append(_timed(run_argv)[0])
        path = Path(scratch) / "hist.txt"
        cycles = write_histogram(path, args.buckets)
        size_mb = path.stat().st_size / 1e6
        walls, rss = [], []
        for _ in range(args.runs):
            analyze_argv = [python, "-m", "bootscope", "latency", "analyze", str(path), "--format", "json"]
            wall, peak = _timed(analyze_argv)
            walls.append(wall)
            rss.append(peak)
    one, three, plain = statistics.median(ours[1]), statistics.median(ours[3]), statistics.median(bare)
    print(f"| bare `cyclictest -D {seconds}`, median of {args.runs} | {plain:.2f} s |")
    print(f"| `bootscope latency run local --duration {seconds} -n 1` (one process, one run) | {one:.2f} s |")
    print(f"| same with `-n 3` (one process, three runs) | {three:.2f} s |")
    print(f"| overhead per invocation (n=1 minus bare) | {one - plain:.2f} s |")
    print(f"| overhead per further run ((n=3 - n=1) / 2 - bare) | {(three - one) / 2 - plain:.2f} s |")
    print(
        f"| `latency analyze --format json`, {cycles:.0e} cycles, {args.buckets} buckets x 2 threads"
        f" ({size_mb:.2f} MB) | {statistics.median(walls):.2f} s wall, peak RSS {max(rss):.0f} MiB |"
    )
    print(parse_in_process(args.buckets, args.runs))


if __name__ == "__main__":
    main()

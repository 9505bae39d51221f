"""How long a 2 x 3 sweep takes against the sum of its boots, with -j 1 and -j 2.

Usage: ``.venv/bin/python -m bench.sweep_bench [-n N] [--kernel SPEC] [--no-write]``. The grid is
``rcupdate.rcu_expedited=0,1`` x ``mem=256,384,512`` (smp 1, TCG, no warm-up), N boots per cell, run
through the same code as ``bootscope sweep``. "Sum of boots" adds each boot's host wall time (QEMU
start to the marker line); the difference to the sweep's wall time is bootscope's own overhead
(kernel resolution, initramfs, store writes, analysis), or, with -j 2, the gain from parallel boots.
Writes a "sweep" section into bench/RESULTS.md unless --no-write.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from bench.results import write_section
from bootscope.lab.plans.boot import Plan, VariantSpec
from bootscope.store import Store
from bootscope.usecases.sweep import expand_grid, parse_param, run_sweep, sweep_plan

GRID = ("rcupdate.rcu_expedited=0,1", "mem=256,384,512")


def run_once(kernel: str, n: int, jobs: int, db: Path) -> dict[str, float]:
    """Run the grid once; return wall seconds, summed boot seconds, boots, and the ratio."""
    cells = expand_grid([parse_param(text) for text in GRID])
    base = VariantSpec(name="base", kernel=kernel, smp=1)
    template = Plan(
        variants=(base,), seed=1, samples_per_variant=n, warmup_per_variant=0, accel="tcg", jobs=jobs
    )
    plan = sweep_plan(cells, base, template)
    with Store.open(db) as store:
        started = time.monotonic()
        result = run_sweep(cells, plan, store, "kernel_init_s")
        wall_s = time.monotonic() - started
        boots = store.boots(result.run or 0)
    summed_s = sum(float(b.metrics.get("host_wall_s") or 0.0) for b in boots)
    return {"wall_s": wall_s, "boots_s": summed_s, "boots": float(len(boots)), "ratio": wall_s / summed_s}


def main(argv: list[str] | None = None) -> dict[int, dict[str, float]]:
    """Run the benchmark; return jobs -> measures (seconds) and write RESULTS.md's sweep section."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=12, help="boots per cell (12: the issue's 2 x 3 x 12)")
    parser.add_argument("--kernel", default="debian:cloud")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv if argv is not None else [])
    results: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for jobs in (1, 2):
            results[jobs] = run_once(args.kernel, args.n, jobs, Path(tmp) / f"j{jobs}.db")
            r = results[jobs]
            print(
                f"-j {jobs}: {r['boots']:.0f} boots, sweep {r['wall_s']:.1f} s, "
                f"sum of boots {r['boots_s']:.1f} s, ratio {r['ratio']:.2f}",
                flush=True,
            )
    load = os.getloadavg()[0]
    rows = "\n".join(
        f"| -j {jobs} | {r['boots']:.0f} | {r['wall_s']:.1f} s | {r['boots_s']:.1f} s | {r['ratio']:.2f} |"
        for jobs, r in results.items()
    )
    section = (
        "## sweep\n\n"
        f"`.venv/bin/python -m bench.sweep_bench -n {args.n}`: grid {' x '.join(GRID)} (2 x 3 cells), "
        f"{args.n} boots per cell (the issue asks for 12), Debian cloud kernel, TCG, smp 1, no warm-up; "
        f"load average {load:.1f} at the end.\n\n"
        "| jobs | boots | sweep wall | sum of boot walls (QEMU start to marker) | ratio |\n"
        "| --- | --- | --- | --- | --- |\n"
        f"{rows}\n\n"
        "Ratio above 1 at -j 1 is bootscope's own per-boot cost (QEMU teardown, analysis, store write, "
        "kernel and initramfs lookup); below 1 at -j 2 is the gain of two boots at once.\n"
    )
    if not args.no_write:
        write_section("sweep", section)
    return results


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])

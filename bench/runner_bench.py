"""The runner's own cost per measurement: schedule, record and store in SQLite, on the fake target.

The fake target boots nothing (its consoles are synthetic and its host clock virtual), so what is
left is the engine: the seeded schedule, the slot loop, host-load metering, the captured-boot
analysis of a 6-line console, the record and one SQLite transaction per measurement. The target is
under 5 ms per measurement, so that thousands of short measurements (latency runs, fleets) are not
slowed by the engine. Medians of ``--runs`` runs of ``--n`` boots per variant x 2 variants, and a
kexec run of chains on the same fake target, measured side by side in one process.

Usage: ``python -m bench.runner_bench [--n 250] [--runs 5]``.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from bench.results import write_section
from bootscope.lab.plans.boot import Plan, VariantSpec
from bootscope.lab.plans.kexec import KexecPlan, KexecVariant
from bootscope.lab.runner import RunResult
from bootscope.lab.targets.fake import FakeTarget
from bootscope.store import Store
from bootscope.usecases.run import start_experiment, start_kexec

TARGET_MS = 5.0


def _boot_run(n: int, jobs: int) -> Callable[[Store], RunResult]:
    plan = Plan(
        variants=(VariantSpec("a", "k"), VariantSpec("b", "k", append="fake.init_ms=1100")),
        seed=1,
        samples_per_variant=n,
        warmup_per_variant=0,
        accel="tcg",
        jobs=jobs,
    )
    return lambda store: start_experiment(plan, store, target=FakeTarget())


def _kexec_run(n: int) -> Callable[[Store], RunResult]:
    plan = KexecPlan("from", (KexecVariant("a", "to"),), hops=4, seed=1, chains=max(1, n // 5), accel="tcg")
    return lambda store: start_kexec(plan, store, target=FakeTarget())


def _per_measurement_ms(run: Callable[[Store], RunResult], runs: int) -> tuple[float, int]:
    """Return the median wall ms per stored measurement over ``runs`` fresh SQLite stores."""
    costs: list[float] = []
    stored = 0
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp, Store.open(Path(tmp) / "bench.db") as store:
            started = time.perf_counter()
            result = run(store)
            elapsed_s = time.perf_counter() - started
            stored = result.boots_run
            costs.append(elapsed_s * 1000 / stored)
    return statistics.median(costs), stored


def render(rows: Sequence[tuple[str, float, int]], runs: int) -> str:
    """Return the RESULTS.md section for the measured settings."""
    lines = [
        "## runner",
        "",
        "The runner's own cost per stored measurement on the fake target (`python -m bench.runner_bench`):",
        "schedule, slot loop, host-load metering, the captured-boot analysis, the record and one SQLite",
        f"transaction each. Median of {runs} runs, each into a fresh SQLite file; target < {TARGET_MS:g} ms.",
        "",
        "| setting | measurements per run | ms per measurement | within target |",
        "| --- | ---: | ---: | --- |",
    ]
    for name, ms, stored in rows:
        lines.append(f"| {name} | {stored} | {ms:.2f} | {'yes' if ms < TARGET_MS else 'NO'} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] = ()) -> list[tuple[str, float, int]]:
    """Measure the settings, print and record them; returns (setting, ms per measurement, count)."""
    parser = argparse.ArgumentParser(prog="python -m bench.runner_bench")
    parser.add_argument("--n", type=int, default=250, help="boots per variant")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(list(argv))
    settings = (
        ("boot, 2 variants, -j 1", _boot_run(args.n, 1)),
        ("boot, 2 variants, -j 2", _boot_run(args.n, 2)),
        ("kexec chains of 4 reboots, -j 1", _kexec_run(args.n)),
    )
    rows = []
    for name, run in settings:
        ms, stored = _per_measurement_ms(run, args.runs)
        print(f"{name}: {ms:.2f} ms per measurement ({stored} measurements per run)", flush=True)
        rows.append((name, ms, stored))
    write_section("runner", render(rows, args.runs))
    return rows


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])

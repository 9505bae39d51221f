"""Benchmark of `bootscope watch` at scale (issue 27): 10,000 series of 1,000 points each.

Run: nice -n 10 .venv/bin/python -m bench.watch_bench [--series 10000] [--points 1000] [--dir DIR]

1. Fill a fresh SQLite store with ``--series`` series of ``--points`` points (one boot per point:
   real boots' values when ``--noise`` names a CSV of them, bench/data/real_boot_noise.csv by default,
   resampled around a level per series; a planted step in every tenth series), written straight into
   the watch tables as `bootscope watch` keeps them. One of them is the series of a stored run.
2. Full recomputation: every stored series judged, steps grouped into alerts, alerts stored
   (``recompute(rebuild=False)``), twice: the first opens the alerts, the second finds them again.
3. One new run: a run of one more revision stored, then ``recompute_run`` (its series read, merged,
   judged, its alerts matched), five times; median.
4. Peak RSS of this process (ru_maxrss).
"""

from __future__ import annotations

import argparse
import csv
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
NOISE = Path(__file__).with_name("data") / "real_boot_noise.csv"


def real_noise(path: Path) -> np.ndarray:
    """Return relative deviations of real boots from their group's median (the CSV's `value` column
    per `group`); lognormal 2 % when the file is absent."""
    if not path.exists():
        return np.random.default_rng(0).lognormal(0.0, 0.02, 4000) - 1.0
    groups: dict[str, list[float]] = {}
    with path.open(encoding="utf-8") as handle:
        rows = csv.DictReader(line for line in handle if not line.startswith("#"))
        for row in rows:
            groups.setdefault(row["group"], []).append(float(row["value"]))
    out = [v / float(np.median(vs)) - 1.0 for vs in groups.values() for v in vs]
    return np.asarray(out)


def main() -> None:
    """Fill, recompute, add runs; print and record the figures in bench/RESULTS.md."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--series", type=int, default=10_000)
    parser.add_argument("--points", type=int, default=1_000)
    parser.add_argument("--noise", type=Path, default=NOISE)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from bench.results import write_section
    from bootscope.store import Store
    from bootscope.store.watch_series import replace_all_series, series_from_arrays
    from bootscope.usecases.watch.alerts import recompute, recompute_run
    from bootscope.usecases.watch.series import run_series
    from tests.usecases.watch.stored_series import store_revision

    work = args.dir or Path(tempfile.mkdtemp(prefix="watch-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    db = str(work / "watch.db")
    Path(db).unlink(missing_ok=True)
    noise = real_noise(args.noise)
    rng = np.random.default_rng(27)
    t0_s, step_s = 1.7e9, 3600.0
    started = time.perf_counter()
    with Store.open(db) as store:
        template = store_revision(store, "rev-tmpl", [2.0], time_s=t0_s - step_s)
        (own,) = run_series(store, template)
        all_series = []
        revisions = tuple(f"rev-{i:05d}" for i in range(args.points))
        for s in range(args.series):
            level = 1.0 + 3.0 * rng.random()
            values = level * (1.0 + rng.choice(noise, args.points))
            if s % 10 == 0:
                values[int(rng.integers(100, args.points - 20)) :] *= 1.05
            arrays = (
                t0_s + step_s * np.arange(args.points),
                np.arange(args.points),
                np.ones(args.points, np.int64),
                values,
            )
            if s == 0:
                all_series.append(
                    series_from_arrays(own.key, own.fingerprint, own.metric, revisions, arrays, own.runs)
                )
            else:
                fingerprint = {"source": "bench", "machine": f"m{s:05d}"}
                all_series.append(
                    series_from_arrays(f"b{s:011d}", fingerprint, "kernel_init_s", revisions, arrays)
                )
        replace_all_series(store, all_series)
    fill_s = time.perf_counter() - started
    now_s = t0_s + step_s * (args.points + 1)
    full_s = []
    with Store.open(db) as store:
        for _ in range(2):
            started = time.perf_counter()
            update = recompute(store, now_s=now_s, rebuild=False)
            full_s.append(time.perf_counter() - started)
            if len(full_s) == 1:
                opened = len(update.opened)
        one_s = []
        for r in range(5):
            run = store_revision(store, f"rev-new{r}", [2.0], time_s=now_s + r)
            started = time.perf_counter()
            recompute_run(store, run, now_s=now_s + r)
            one_s.append(time.perf_counter() - started)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    size_mib = Path(db).stat().st_size / 2**20
    rows = [
        ("fill the store (series packed, SQLite)", f"{fill_s:.1f} s, {size_mib:.0f} MiB"),
        ("full recomputation, first (opens the alerts)", f"**{full_s[0]:.1f} s** ({opened} alerts)"),
        ("full recomputation, again (alerts found again)", f"**{full_s[1]:.1f} s**"),
        (
            "one new run: merge, judge its series, match alerts (median of 5)",
            f"**{statistics.median(one_s) * 1000:.0f} ms**",
        ),
        ("peak RSS", f"{peak_mib:.0f} MiB"),
    ]
    for what, result in rows:
        print(f"{what}: {result}")
    noise_name = args.noise.name if args.noise.exists() else "lognormal 2 %"
    if not args.no_record:
        table = "\n".join(f"| {what} | {result} |" for what, result in rows)
        write_section(
            "watch at scale (issue 27, `bench/watch_bench.py`)",
            "## watch at scale (issue 27, `bench/watch_bench.py`)\n\n"
            f"Command: `nice -n 10 .venv/bin/python -m bench.watch_bench --series {args.series} --points"
            f" {args.points}`, {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, this 2-core machine."
            f" Noise: relative deviations of real boots ({noise_name}),"
            " one boot per point, a 5 % step in every tenth series. Targets: full recomputation under 60 s,"
            " one new run's alerts under 1 s.\n\n| what | result |\n| --- | --- |\n" + table + "\n",
        )
    if args.dir is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

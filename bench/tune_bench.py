"""Benchmark of `bootscope tune`'s search (issue 29): boots spent by its staged screen, every knob
against one shared baseline arm a stage (the first a first look: half the boots a knob against four
times as many of the baseline), against a one-knob-at-a-time sweep with the same precision
(each knob screened alone against its own baseline arm, the same stages and rules), side by side on
the same candidates, on real boots.

Run: nice -n 10 .venv/bin/python -m bench.tune_bench [--kernel debian:cloud] [--icount N] [-n 4] [-j 2]

Without --icount the boots run under plain TCG, with this host's noise: decisions may then differ
between the two searches by chance, and the table says where they do.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    """Tune once, sweep the same knobs one at a time, print and record boots and decisions."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernel", default="debian:cloud")
    parser.add_argument("--append", default="console=ttyS0 initcall_debug ignore_loglevel")
    parser.add_argument("--icount", type=int, default=None)
    parser.add_argument("-n", type=int, default=4)
    parser.add_argument("-j", type=int, default=2)
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from bench.results import write_section
    from bootscope.lab.plans.settings import GivenSettings
    from bootscope.store import Store
    from bootscope.usecases.run import start_experiment
    from bootscope.usecases.tune.request import TuneRequest
    from bootscope.usecases.tune.screen import screen
    from bootscope.usecases.tune.search import base_spec, tune

    request = TuneRequest(
        kernel=args.kernel, append=args.append, metric="kernel_init_s", boots_per_arm=args.n, alpha=0.05,
        allow=("feature",), machine={"icount": args.icount},
        settings=GivenSettings(seed=args.seed, jobs=args.j, warmup_per_variant=0),
    )  # fmt: skip
    db = Path(tempfile.mkdtemp(prefix="tune-bench-")) / "tune.db"
    with Store.open(db) as store:

        def run(plan: object, meta: dict[str, str]) -> int:
            return start_experiment(plan, store, meta=meta).experiment.id  # type: ignore[arg-type]

        started = time.perf_counter()
        result = tune(request, store, runner=run)
        tune_s = time.perf_counter() - started
        screen_boots = sum(
            len(store.boots(r)) for r in result.runs if store.experiment(r).meta.get("tune") == "screen"
        )
        floor = 0.01 * (result.baseline_median or 0.0)
        started = time.perf_counter()
        alone = {}
        alone_boots = 0
        for tried in result.tried:
            one = screen(store, request, base_spec(request), [tried.knob], run, None, floor)
            alone[tried.knob.name] = one.tried[0].verdict
            alone_boots += sum(len(store.boots(r)) for r in one.runs)
        alone_s = time.perf_counter() - started
    rows = [
        (
            t.knob.name,
            t.verdict.decision,
            t.verdict.boots,
            alone[t.knob.name].decision,
            alone[t.knob.name].boots,
        )
        for t in result.tried
    ]
    for row in rows:
        print(" | ".join(map(str, row)))
    same = sum(1 for r in rows if r[1] == r[3])
    print(
        f"screen boots: staged {screen_boots} ({tune_s:.0f} s with probe and final),"
        f" one at a time {alone_boots} ({alone_s:.0f} s); same decisions {same}/{len(rows)}"
    )
    if args.no_record:
        return
    where = f"-icount {args.icount}" if args.icount is not None else "plain TCG (this host's noise)"
    icount = f" --icount {args.icount}" if args.icount is not None else ""
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    table = "\n".join(f"| `{k}` | {d1} | {b1} | {d2} | {b2} |" for k, d1, b1, d2, b2 in rows)
    mode = f"-icount {args.icount}" if args.icount is not None else "plain TCG"
    heading = f"tune: the staged screen against one knob at a time, {mode} (issue 29, `bench/tune_bench.py`)"
    write_section(
        heading,
        f"## {heading}\n\n"
        f"Command: `nice -n 10 .venv/bin/python -m bench.tune_bench --kernel {args.kernel} -n {args.n}"
        f" -j {args.j}{icount}`, {when} UTC, this 2-core machine; {where}; baseline `{args.append}`,"
        " `--allow feature`. The staged screen boots every undecided knob against one shared baseline"
        " arm a stage, its first a first look (from three knobs on: ceil(n/2) boots a knob against four"
        " times as many of the baseline); the sweep screens each knob alone against its own baseline arm,"
        " n a side a stage, with the same stages, -n and rules (a verdict needs the rank interval and"
        " Welch's to agree, on both sides).\n\n"
        f"Screen boots: **{screen_boots} staged** against **{alone_boots} one at a time** (ratio"
        f" {screen_boots / max(alone_boots, 1):.2f}); same decision for {same} of {len(rows)} knobs.\n\n"
        "| knob | staged | boots | one at a time | boots |\n| --- | --- | --- | --- | --- |\n" + table + "\n",
    )


if __name__ == "__main__":
    main()

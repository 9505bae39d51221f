"""The first look of `bootscope tune` (issue 29): how wide a knob's interval is, and how often a knob
without effect is called a saving or slower, for the boots a side of its stages against those of a
one-knob-at-a-time sweep, with seeded normal boots (no QEMU: the statistics alone).

Run: .venv/bin/python -m bench.first_look_bench [--trials 400] [--no-record]

Rows: a knob's boots against the baseline's after stage 1, 2, 3 at -n 4 and -n 6 (the staged screen
with three knobs or more: ceil(n/2) against 4 ceil(n/2), then n against n a stage, pooled), beside
the sweep's n, 2n, 3n a side. Width: the median width of the Hodges-Lehmann 95 % interval, in the
boots' sd. Error: how often a verdict is wrong when the knob changes nothing, with the two arms
equally spread and with the knob's arm 25 times wider: by the rank interval alone, and by the
tune's verdict (which Welch's interval must agree with).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# (label, knob boots, baseline boots): the staged screen's pooled boots and the sweep's, stage by stage.
ROWS = (
    ("-n 4 stage 1", 2, 8, 4),
    ("-n 4 stage 2", 6, 12, 8),
    ("-n 4 stage 3", 10, 16, 12),
    ("-n 6 stage 1", 3, 12, 6),
    ("-n 6 stage 2", 9, 18, 12),
    ("-n 6 stage 3", 15, 24, 18),
)


def errors(knob: int, base: int, wider: float, trials: int, seed: int) -> tuple[float, float, float]:
    """Return (median rank-interval width in sd, rank-only error rate, verdict error rate) for
    ``knob`` boots against ``base`` with no true difference, the knob's arm ``wider`` times the sd."""
    from bootscope.stats.compare import Options, compare
    from bootscope.usecases.tune.decide import NO_SAVING, judge

    rng = np.random.default_rng(seed)
    options = Options(alpha=0.05, power=False, bootstrap_resamples=0)
    widths, rank_wrong, verdict_wrong = [], 0, 0
    for _ in range(trials):
        baseline, tuned = list(rng.normal(0.0, 1.0, base)), list(rng.normal(0.0, wider, knob))
        ci = compare(baseline, tuned, "kernel_init_s", "s", options).shift_ci
        assert ci is not None
        widths.append(ci[1] - ci[0])
        rank_wrong += not ci[0] <= 0.0 <= ci[1]
        verdict_wrong += judge(baseline, tuned, "kernel_init_s", "s", 0.05).decision != NO_SAVING
    return statistics.median(widths), rank_wrong / trials, verdict_wrong / trials


def main() -> None:
    """Print and record the table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from bench.results import write_section

    started = time.perf_counter()
    lines = []
    for number, (label, knob, base, sweep) in enumerate(ROWS):
        staged = [errors(knob, base, wider, args.trials, 10 * number + i) for i, wider in enumerate((1, 25))]
        alone = [
            errors(sweep, sweep, wider, args.trials, 100 + 10 * number + i) for i, wider in enumerate((1, 25))
        ]
        cells = [f"{knob} v {base}", f"{staged[0][0]:.2f}", f"{sweep} v {sweep}", f"{alone[0][0]:.2f}"]
        for found in (staged, alone):
            cells.append(" / ".join(f"{found[i][1]:.1%} / {found[i][2]:.1%}" for i in (0, 1)))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
        print(lines[-1], flush=True)
    took = time.perf_counter() - started
    if args.no_record:
        return
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    heading = "tune: the first look, interval widths and error rates (issue 29, `bench/first_look_bench.py`)"
    write_section(
        heading,
        f"## {heading}\n\n"
        f"Command: `.venv/bin/python -m bench.first_look_bench --trials {args.trials}`, {when} UTC,"
        f" {took:.0f} s; seeded normal boots, no true difference. Width: the median width of the"
        " 95 % Hodges-Lehmann interval of a knob's saving, in the boots' sd. Errors: the share of"
        " trials whose interval excludes zero (rank interval alone) / whose verdict is a saving or"
        " slower (the tune's verdict, which Welch's interval must agree with), first with both arms"
        " equally spread, then with the knob's arm 25 times wider.\n\n"
        "| stage | staged boots (knob v baseline) | width | sweep boots | width |"
        " staged errors: equal (rank / verdict) / wider (rank / verdict) | sweep errors: the same |\n"
        "| --- | --- | --- | --- | --- | --- | --- |\n" + "\n".join(lines) + "\n",
    )


if __name__ == "__main__":
    main()

"""A labelled benchmark of `bootscope watch`'s detector against two peers' rules (issue 27).

Run: nice -n 10 .venv/bin/python -m bench.watch_labelled [--series 400] [--points 200] [--seed 27]

Series are resampled from REAL stored boots (``--noise``, default bench/data/real_boot_noise.csv:
each group is one metric of one variant of a real run, its real noise and real modes): a point is the
median of ``--boots`` boots drawn with replacement from one group, scaled to a level per series. The
series' jitter is measured on a long clean stretch of the same recipe (the robust SD of successive
points, as the detector defines it). Planted, each at a known position:

- a step of k x jitter (k in 1, 2, 3, 5; up or down) in 60 % of the series;
- a shape change in 15 %: from the position on, each boot is drawn from the slowest fifth of its
  group with probability 0.35 (a slow mode grows more frequent; the fast mode stays where it was);
- nothing in 25 % (clean stretches); and in every series 5 % of the points are missing (dropped).

Scored the same way for all three rules: a planted change is found when a reported change of the
right sign lies within 3 points of it; a reported change that matches none is a false alert group
(one series per group here). Peers, on the same series in the same run:

- Perfherder's rule: Welch t of the 12 points before against the 12 after, t > 7 and the means
  more than 2 % apart, the local maximum of t over a run of such positions;
- a windowed Mann-Whitney: 12 against 12 points, two-sided p < 0.01, the local minimum of p.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from scipy import stats as sps

if TYPE_CHECKING:
    from bootscope.stats.series_watch import WatchRule

ROOT = Path(__file__).resolve().parents[1]
NOISE = Path(__file__).with_name("data") / "real_boot_noise.csv"
STEPS_K = (1.0, 2.0, 3.0, 5.0)
MATCH_POINTS = 3


@dataclass(frozen=True, slots=True)
class Labelled:
    """One generated series: its points, its noise group, jitter, and what was planted where."""

    points: np.ndarray
    boots: np.ndarray  # (points, boots per point)
    group: str
    jitter: float
    kind: str  # step, shape, clean
    k: float
    position: int
    sign: int


def read_groups(path: Path, min_values: int = 30) -> dict[str, np.ndarray]:
    """Return group -> values of the noise CSV (lines starting with # are provenance), groups of
    at least ``min_values`` values only."""
    groups: dict[str, list[float]] = {}
    with path.open(encoding="utf-8") as handle:
        for row in csv.DictReader(line for line in handle if not line.startswith("#")):
            groups.setdefault(row["group"], []).append(float(row["value"]))
    return {name: np.asarray(values) for name, values in groups.items() if len(values) >= min_values}


def _draws(
    values: np.ndarray, count: int, boots: int, rng: np.random.Generator, slow_share: np.ndarray | None = None
) -> np.ndarray:
    draws = rng.choice(values, (count, boots))
    if slow_share is not None:
        slow = values[values >= np.quantile(values, 0.8)]
        swap = rng.random((count, boots)) < slow_share[:, None]
        draws = np.where(swap, rng.choice(slow, (count, boots)), draws)
    return draws


def _jitter(points: np.ndarray) -> float:
    return float(np.median(np.abs(np.diff(points)))) / 0.9539


def generate(
    groups: dict[str, np.ndarray], n_series: int, length: int, boots: int, seed: int
) -> list[Labelled]:
    """Return ``n_series`` labelled series (see the module docstring)."""
    rng = np.random.default_rng(seed)
    names = sorted(groups)
    out = []
    for s in range(n_series):
        name = names[s % len(names)]
        values = groups[name] / np.median(groups[name]) * (1.0 + 4.0 * rng.random())
        jitter = _jitter(np.median(_draws(values, 4000, boots, rng), axis=1))
        roll = rng.random()
        position = int(rng.integers(50, length - 25))
        share = np.zeros(length)
        kind, k, sign = "clean", 0.0, 0
        if roll < 0.6:
            kind, k, sign = (
                "step",
                float(STEPS_K[int(rng.integers(0, len(STEPS_K)))]),
                int(rng.choice([-1, 1])),
            )
        elif roll < 0.75:
            kind, sign = "shape", 1
            share[position:] = 0.35
        draws = _draws(values, length, boots, rng, share if kind == "shape" else None)
        if kind == "step":
            draws[position:] += sign * k * jitter
        points = np.median(draws, axis=1)
        keep = rng.random(length) >= 0.05
        keep[position] = True  # the planted point itself stays, so "where" is defined
        new_position = int(np.count_nonzero(keep[:position]))
        out.append(Labelled(points[keep], draws[keep], name, jitter, kind, k, new_position, sign))
    return out


Found = list[tuple[int, int, int, int]]  # (position, sign, first plausible, last plausible)


def ours_at(rule: WatchRule | None = None) -> Callable[[Labelled], Found]:
    """bootscope's detector at ``rule`` (default: `bootscope watch`'s), as `bootscope watch` runs
    it: the medians' series and the slow-share series (``usecases/watch/detect.py``)."""

    def detect(item: Labelled) -> Found:
        from bootscope.stats.modes import tail_hits
        from bootscope.stats.series_watch import watch_series, watch_shares

        counts = np.full(item.boots.shape[0], item.boots.shape[1], dtype=np.int64)
        totals = watch_series(item.points, rule).changes
        found = [(c.position, int(np.sign(c.shift)), c.first_position, c.last_position) for c in totals]
        cuts = [0, *(c.position for c in totals), counts.size]
        for low, high in itertools.pairwise(cuts):
            hits, _ = tail_hits(item.boots[low:high].ravel(), counts[low:high])
            shares = watch_shares(hits, counts[low:high], rule).changes
            found += [
                (low + c.position, 1 if c.shift > 0 else -1, low + c.first_position, low + c.last_position)
                for c in shares
            ]
        return sorted(found)

    return detect


ours = ours_at()


def _local_best(score: np.ndarray, flagged: np.ndarray, sign: np.ndarray) -> Found:
    found = []
    t = 0
    while t < flagged.size:
        if not flagged[t]:
            t += 1
            continue
        stop = t
        while stop < flagged.size and flagged[stop]:
            stop += 1
        best = t + int(np.argmax(score[t:stop]))
        found.append((best, int(sign[best]), best, best))
        t = stop
    return found


def perfherder_rule(item: Labelled) -> Found:
    """Perfherder's rule on the series of medians."""
    return perfherder(item.points)


def mann_whitney_rule(item: Labelled) -> Found:
    """The windowed Mann-Whitney on the series of medians."""
    return windowed_mann_whitney(item.points)


def perfherder(points: np.ndarray, window: int = 12, t_min: float = 7.0, relative: float = 0.02) -> Found:
    """Perfherder's rule as its documentation describes it (see the module docstring)."""
    n = points.size
    score, flagged, sign = np.zeros(n), np.zeros(n, bool), np.zeros(n, int)
    for t in range(window, n - window + 1):
        back, fore = points[t - window : t], points[t : t + window]
        diff = fore.mean() - back.mean()
        se = np.sqrt(back.var(ddof=1) / window + fore.var(ddof=1) / window)
        value = abs(diff) / se if se > 0 else (np.inf if diff else 0.0)
        score[t], sign[t] = value, int(np.sign(diff))
        flagged[t] = value > t_min and abs(diff) > relative * abs(back.mean())
    return _local_best(score, flagged, sign)


def windowed_mann_whitney(points: np.ndarray, window: int = 12, alpha: float = 0.01) -> Found:
    """A plain windowed Mann-Whitney: 12 against 12, p < alpha, the local minimum of p."""
    n = points.size
    score, flagged, sign = np.zeros(n), np.zeros(n, bool), np.zeros(n, int)
    for t in range(window, n - window + 1):
        back, fore = points[t - window : t], points[t : t + window]
        p = float(sps.mannwhitneyu(fore, back, alternative="two-sided").pvalue)
        score[t], sign[t] = -p, int(np.sign(np.median(fore) - np.median(back)))
        flagged[t] = p < alpha
    return _local_best(score, flagged, sign)


def score(series: Sequence[Labelled], rule: Callable[[Labelled], Found]) -> dict[str, float]:
    """Return recall per planted kind and step size, and the share of reported changes that match
    nothing planted (false alert groups)."""
    hits: dict[str, list[bool]] = {}
    reported = false = 0
    widths: list[int] = []
    for item in series:
        found = rule(item)
        reported += len(found)
        widths += [last - first + 1 for _, _, first, last in found]
        matched = [
            (abs(position - item.position) <= MATCH_POINTS or first - 1 <= item.position <= last + 1)
            and (item.kind == "shape" or sign == item.sign)
            for position, sign, first, last in found
        ]
        if item.kind != "clean":
            label = "shape" if item.kind == "shape" else f"{item.k:g}x"
            hits.setdefault(label, []).append(any(matched))
        false += sum(1 for m in matched if not m) if item.kind != "clean" else len(found)
        if item.kind != "clean" and sum(matched) > 1:
            false += sum(matched) - 1  # the same change reported twice
    result = {label: float(np.mean(v)) for label, v in sorted(hits.items())}
    result["false groups"] = false / reported if reported else 0.0
    result["reported"] = float(reported)
    result["width"] = float(np.median(widths)) if widths else 0.0
    return result


def main() -> None:
    """Generate, run the three rules, print and record the table in bench/RESULTS.md."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--series", type=int, default=400)
    parser.add_argument("--points", type=int, default=200)
    parser.add_argument("--boots", type=int, default=3)
    parser.add_argument("--seed", type=int, default=27)
    parser.add_argument("--noise", type=Path, default=NOISE)
    parser.add_argument("--no-record", action="store_true")
    parser.add_argument("--no-sweep", action="store_true", help="Only the three rules at their defaults.")
    parser.add_argument("--min-group", type=int, default=30, help="Fewest boots a noise group needs.")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from bench.results import write_section

    groups = read_groups(args.noise, args.min_group)
    if not groups:
        raise SystemExit(f"{args.noise}: no group has {args.min_group} values (--min-group)")
    series = generate(groups, args.series, args.points, args.boots, args.seed)
    from bootscope.stats.series_watch import WatchRule

    rules: dict[str, Callable[[Labelled], Found]] = {
        "bootscope watch": ours,
        "Perfherder (t > 7, 2 %)": perfherder_rule,
        "windowed Mann-Whitney": mann_whitney_rule,
    }
    if not args.no_sweep:
        # Operating points: each rule made stricter or looser, to compare false groups at equal recall.
        rules |= {
            "bootscope watch, alpha 1e-5": ours_at(WatchRule(alpha=1e-5)),
            "bootscope watch, alpha 1e-6": ours_at(WatchRule(alpha=1e-6)),
            "Perfherder, t > 5": lambda item: perfherder(item.points, t_min=5.0),
            "Perfherder, t > 4": lambda item: perfherder(item.points, t_min=4.0),
        }
    results = {}
    for name, rule in rules.items():
        started = time.perf_counter()
        results[name] = score(series, rule)
        results[name]["seconds"] = time.perf_counter() - started
    labels = [f"{k:g}x" for k in STEPS_K] + ["shape"]
    header = (
        "| rule | "
        + " | ".join(f"recall {label}" for label in labels)
        + " | false alert groups | changes reported | median range (revisions) | s |"
    )
    lines = [header, "| --- " * (len(labels) + 5) + "|"]
    for name, result in results.items():
        cells = [f"{result.get(label, float('nan')):.0%}" for label in labels]
        lines.append(
            f"| {name} | "
            + " | ".join(cells)
            + f" | {result['false groups']:.1%} | {result['reported']:.0f} | {result['width']:.0f}"
            + f" | {result['seconds']:.1f} |"
        )
    table = "\n".join(lines)
    print(table)
    counts = {kind: sum(1 for s in series if s.kind == kind) for kind in ("step", "shape", "clean")}
    jitters = np.array([s.jitter / np.median(s.points) for s in series])
    stamp = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    if not args.no_record:
        # Another machine's noise gets a section of its own.
        title = "watch: a labelled benchmark (issue 27, `bench/watch_labelled.py`)"
        noise_flag = ""
        if args.noise.resolve() != NOISE.resolve():
            title = f"watch: a labelled benchmark on {args.noise.name} (issue 27)"
            where = args.noise.resolve()
            noise_flag = f" --noise {where.relative_to(ROOT) if where.is_relative_to(ROOT) else where}"
            noise_flag += f" --min-group {args.min_group}" if args.min_group != 30 else ""
        write_section(
            title,
            f"## {title}\n\n"
            f"Command: `nice -n 10 .venv/bin/python -m bench.watch_labelled --series {args.series} --points"
            f" {args.points} --boots {args.boots} --seed {args.seed}{noise_flag}`, {stamp} UTC."
            f" Noise: {len(groups)} groups of real boots ({args.noise.name}, its source in its first lines);"
            f" {counts['step']} series with a step, {counts['shape']} with a shape change,"
            f" {counts['clean']} clean; a point is the median of {args.boots} boots; jitter (relative to"
            f" the level) from {jitters.min():.2%} to {jitters.max():.2%}, median"
            f" {np.median(jitters):.2%}. Recall per planted step size in units of the series' jitter; a"
            " false alert group is a reported change that matches nothing planted.\n\n" + table + "\n",
        )


if __name__ == "__main__":
    main()

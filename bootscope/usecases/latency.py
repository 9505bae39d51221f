"""A stored ``latency run`` experiment in, per-variant tails and across-run comparisons out (the
latency counterpart of :mod:`bootscope.usecases.views`).

Each record's log is its whole transcript, so everything here is computed again from what the tool
printed: per run its p99.9, p99.99 and max (each one observation of that run), its overflow and
cycles, the facts it ran under and the interrupts that fired during it; per variant all runs'
histograms pooled (for overlays). Each variant is compared with the baseline (the first variant)
per statistic by :func:`bootscope.stats.latency_tail.compare_run_statistics` (Hodges-Lehmann and
Mann-Whitney, Holm over the statistics, no verdict under 5 runs a side). Guard-rail warnings:
settings that differ between variants, histogram overflow, quantiles a run is too short to
resolve, facts (kernel, cmdline, preemption) that change between runs of one variant.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from bootscope import metrics
from bootscope.amounts import parse_amount
from bootscope.analyze.latency import LatencyRow, summarize_run
from bootscope.errors import BootscopeError, InputError, StatsError
from bootscope.lab.plans.latency import latency_plan_from_dict, unequal_settings
from bootscope.lab.plans.latency_tools import preemption_from
from bootscope.lab.workloads.latency_record import parse_tool_section, run_metrics
from bootscope.latency_model import IntArray
from bootscope.model import Comparison, Outcome
from bootscope.parse.latency_transcript import interrupt_counts, split_transcript
from bootscope.stats.compare import Options
from bootscope.stats.latency import (
    RateRatio,
    exceedance_clustering,
    exceedances,
    histogram_quantile,
    rate_ratio,
)
from bootscope.stats.latency_tail import GevFit, compare_run_statistics, gev_fit
from bootscope.store import Store

# The statistic names shown and compared, each with the metric it is stored as.
STATISTICS = {
    "p99.9": metrics.LATENCY_P999_US,
    "p99.99": metrics.LATENCY_P9999_US,
    "max": metrics.LATENCY_MAX_US,
}
FACT_KEYS = (
    "kernel_release",
    "preemption",
    "realtime",
    "cmdline",
    "governor",
    "idle_driver",
    "idle_governor",
)
TOP_INTERRUPTS = 5
GEV_MIN_RUNS = 10  # a GEV fit needs at least 10 block maxima: one per run
GEV_RETURN_CYCLES = (10**6, 10**9)
# scipy's genextreme.fit takes 0.2-0.5 s here; the bootstrap refits this many times per variant.
GEV_RESAMPLES = 50


@dataclass(frozen=True, slots=True)
class RunTail:
    """One measured run: its statistics in us (None: not resolved, or the run failed), samples
    over the histogram's end, cycles over all threads, the facts it ran under, and the interrupts
    that fired most during it (name, count)."""

    variant: str
    index: int
    outcome: str
    statistics: Mapping[str, float | None]
    overflow: int
    cycles: int
    limit_us: int | None
    facts: Mapping[str, str]
    interrupts: tuple[tuple[str, int], ...] = ()
    rows: tuple[LatencyRow, ...] = ()
    placement: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class VariantTails:
    """One variant's runs and its pooled histogram (all runs and threads; ``counts[i]`` samples of
    ``i`` us, ``overflow`` beyond the end)."""

    name: str
    runs: tuple[RunTail, ...]
    counts: IntArray
    overflow: int

    def values(self, statistic: str) -> list[float]:
        """Return the statistic of every run that resolved it (one observation per run)."""
        return [float(v) for run in self.runs if (v := run.statistics.get(statistic)) is not None]


@dataclass(frozen=True, slots=True)
class LatencyRunsResult:
    """A latency experiment analysed: variants (baseline first), comparisons per variant against
    the baseline, guard-rail warnings, and the tool."""

    experiment_id: int
    tool: str
    variants: tuple[VariantTails, ...]
    comparisons: Mapping[str, tuple[Comparison, ...]]
    warnings: tuple[str, ...] = field(default=())
    accel: str = ""
    threshold_us: int | None = None
    exceedance: Mapping[str, RateRatio] = field(default_factory=dict)
    gev: Mapping[str, GevFit] = field(default_factory=dict)


def run_tail(variant: str, index: int, outcome: str, lines: Sequence[str]) -> tuple[RunTail, IntArray | None]:
    """Return one run's tail from its transcript ``lines`` and its histogram summed over threads
    (None without one). A failed or unreadable run has no statistics."""
    transcript = split_transcript(lines)
    facts = transcript.facts()
    if "preemption" not in facts:
        facts["preemption"] = preemption_from(facts.get("sched_preempt"), facts.get("kernel_version")) or ""
    before = interrupt_counts(transcript.text("interrupts-before"))
    after = interrupt_counts(transcript.text("interrupts-after"))
    delta = sorted(((k, after[k] - before.get(k, 0)) for k in after), key=lambda kv: -kv[1])
    empty = RunTail(variant, index, outcome, {}, 0, 0, None, facts, tuple(delta[:TOP_INTERRUPTS]))
    if outcome != Outcome.OK.value:
        return empty, None
    try:
        run = parse_tool_section(transcript, f"{variant}#{index}")
    except BootscopeError:
        return empty, None
    values = run_metrics(run)
    statistics = {name: values.get(metric) for name, metric in STATISTICS.items()}
    with_histogram = [s for s in run.series if s.counts is not None]
    width = max((len(s.counts) for s in with_histogram if s.counts is not None), default=0)
    summed = np.zeros(width, dtype=np.int64)
    for series in with_histogram:
        assert series.counts is not None
        summed[: len(series.counts)] += series.counts
    limits = [s.limit_us for s in run.series if s.limit_us is not None]
    tail = RunTail(
        variant, index, outcome, statistics,
        overflow=sum(s.overflow for s in run.series),
        cycles=sum(s.cycles or s.total for s in run.series),
        limit_us=min(limits) if limits else None,
        facts=facts,
        interrupts=tuple(delta[:TOP_INTERRUPTS]),
        rows=tuple(summarize_run(run)),
    )  # fmt: skip
    return tail, summed if with_histogram else None


def stored_latency_run(
    db: str, experiment_id: int | str, threshold: str | None = None, gev: bool = False
) -> LatencyRunsResult:
    """Return the analysis of latency experiment ``experiment_id`` stored in ``db`` (``latency show``,
    and the table after ``latency run``); ``threshold`` is the exceedance threshold as given
    (``100us``; a bare number is in us; None: the baseline's pooled p99.99). Raises InputError for a
    threshold that is not a latency, and like :func:`analyze_latency_experiment`."""
    threshold_us = None
    if threshold is not None:
        value, fraction = parse_amount(
            threshold if threshold[-1:].isalpha() else f"{threshold}us", "s", "--threshold"
        )
        if value is None or fraction is not None:
            raise InputError(f"--threshold {threshold!r}: give a latency such as 100us")
        threshold_us = round(value * 1e6)
    with Store.open(db, create=False) as store:
        return analyze_latency_experiment(store, experiment_id, threshold_us=threshold_us, gev=gev)


def analyze_latency_experiment(
    store: Store,
    experiment_id: int | str,
    alpha: float = 0.05,
    threshold_us: int | None = None,
    gev: bool = False,
) -> LatencyRunsResult:
    """Return the analysis of a stored latency experiment; exceedances are counted above
    ``threshold_us`` (None: the baseline's pooled p99.99); ``gev`` adds a GEV fit of each variant's
    run maxima (10 runs or more; seconds to a minute: a bootstrap of maximum-likelihood fits).
    Raises StoreError for an unknown experiment, InputError when it is not a latency experiment."""

    experiment = store.experiment(experiment_id)
    if experiment.plan.get("workload") != "latency":
        raise InputError(f"experiment {experiment.id} is not a latency run")
    plan = latency_plan_from_dict(experiment.plan)
    records = [r for r in store.boots(experiment.id) if r.measured]
    warnings: list[str] = []
    unequal = unequal_settings(plan.variants)
    if unequal:
        warnings.append(f"NOT LIKE FOR LIKE: the variants differ in {', '.join(unequal)}")
    variants: list[VariantTails] = []
    per_run: dict[str, list[tuple[int, IntArray, int]]] = {}
    for variant in plan.variants:
        runs: list[RunTail] = []
        pooled = np.zeros(0, dtype=np.int64)
        overflow = 0
        for record in sorted((r for r in records if r.variant == variant.name), key=lambda r: r.index):
            lines = [line.text for line in store.boot_log(experiment.id, record.index)]
            tail, counts = run_tail(variant.name, record.index, record.outcome, lines)
            tail = replace(tail, placement=dict(record.placement))
            runs.append(tail)
            if counts is not None:
                if len(counts) > len(pooled):
                    pooled = np.concatenate([pooled, np.zeros(len(counts) - len(pooled), dtype=np.int64)])
                pooled[: len(counts)] += counts
                overflow += tail.overflow
                per_run.setdefault(variant.name, []).append((record.index, counts, tail.overflow))
        variants.append(VariantTails(variant.name, tuple(runs), pooled, overflow))
        warnings += _variant_warnings(variants[-1])
    hosts = sorted({str(r.placement["host"]) for r in records if r.placement.get("host")})
    if len(hosts) > 1:
        warnings.append(
            f"the runs were measured on {len(hosts)} hosts ({', '.join(hosts)}): a latency belongs to"
            " the machine that measured it; each run's placement says which"
        )
    comparisons = _compare(variants, alpha, warnings)
    threshold, ratios = _exceedances(variants, threshold_us, 1 - alpha, warnings)
    if threshold is not None:
        for name, histograms in per_run.items():
            warnings += _clustering(name, histograms, threshold, alpha)
    fits = {v.name: fit for v in variants if gev and (fit := _gev(v, 1 - alpha, warnings)) is not None}
    return LatencyRunsResult(
        experiment_id=experiment.id,
        tool=plan.variants[0].settings.tool,
        variants=tuple(variants),
        comparisons=comparisons,
        warnings=tuple(warnings),
        accel=experiment.accel,
        threshold_us=threshold,
        exceedance=ratios,
        gev=fits,
    )


def _variant_warnings(variant: VariantTails) -> list[str]:
    warnings = []
    failed = [r.index for r in variant.runs if r.outcome != Outcome.OK.value]
    if failed:
        warnings.append(f"{variant.name}: runs {', '.join(map(str, failed))} failed; left out")
    for run in variant.runs:
        if run.overflow:
            warnings.append(
                f"{variant.name} run {run.index}: {run.overflow} samples beyond the histogram's end"
                f" ({run.limit_us} us): quantiles there are shown as '>{run.limit_us}'; raise -h"
            )
    ok = [r for r in variant.runs if r.outcome == Outcome.OK.value]
    for name in STATISTICS:
        missing = sum(1 for r in ok if r.statistics.get(name) is None)
        if missing:
            warnings.append(
                f"{variant.name}: {name} not resolved in {missing} of {len(ok)} runs (too few cycles, or in"
                " the overflow): run longer or with a larger histogram"
            )
    for key in FACT_KEYS:
        seen = {r.facts.get(key, "") for r in ok}
        if len(seen) > 1:
            warnings.append(f"{variant.name}: {key} changed between runs: {' | '.join(sorted(seen))}")
    return warnings


def _compare(
    variants: Sequence[VariantTails], alpha: float, warnings: list[str]
) -> dict[str, tuple[Comparison, ...]]:
    baseline = variants[0]
    result: dict[str, tuple[Comparison, ...]] = {}
    for variant in variants[1:]:
        a = {name: baseline.values(name) for name in STATISTICS}
        b = {name: variant.values(name) for name in STATISTICS}
        usable = [name for name in STATISTICS if len(a[name]) >= 2 and len(b[name]) >= 2]
        if not usable:
            warnings.append(
                f"{variant.name} vs {baseline.name}: fewer than 2 resolved runs a side; nothing compared"
            )
            continue
        try:
            compared = compare_run_statistics(
                {n: a[n] for n in usable}, {n: b[n] for n in usable}, Options(alpha=alpha, power=False),
                (baseline.name, variant.name),
            )  # fmt: skip
        except StatsError as error:
            warnings.append(f"{variant.name} vs {baseline.name}: not compared ({error})")
            continue
        result[variant.name] = tuple(compared)
    return result


def _exceedances(
    variants: Sequence[VariantTails], threshold_us: int | None, confidence: float, warnings: list[str]
) -> tuple[int | None, dict[str, RateRatio]]:
    """Return the threshold and, per variant, its exceedance rate ratio against the baseline (all
    runs' samples pooled; exact conditional interval)."""
    baseline = variants[0]
    if len(variants) < 2 or baseline.counts.size == 0:
        return threshold_us, {}
    if threshold_us is None:
        estimate = histogram_quantile(baseline.counts, baseline.overflow, 0.9999)
        if estimate.value_us is None or not estimate.resolvable:
            warnings.append(
                f"no exceedance rates: {baseline.name}'s pooled p99.99 is not resolved; give --threshold"
            )
            return None, {}
        threshold_us = estimate.value_us
    ratios: dict[str, RateRatio] = {}
    for variant in variants[1:]:
        if variant.counts.size == 0:
            continue
        try:
            k_a = exceedances(baseline.counts, baseline.overflow, threshold_us)
            k_b = exceedances(variant.counts, variant.overflow, threshold_us)
            n_a = int(baseline.counts.sum()) + baseline.overflow
            n_b = int(variant.counts.sum()) + variant.overflow
            ratios[variant.name] = rate_ratio(k_a, n_a, k_b, n_b, confidence)
        except StatsError as error:
            warnings.append(f"{variant.name}: no exceedance rate ({error})")
    return threshold_us, ratios


def _clustering(
    variant: str, runs: Sequence[tuple[int, IntArray, int]], threshold_us: int, alpha: float
) -> list[str]:
    """Return a note when the variant's exceedances above ``threshold_us`` bunch in some runs (the
    runs do not share one rate: a disturbed run, or an event that comes and goes), else nothing."""
    try:
        exceeded = [exceedances(counts, overflow, threshold_us) for _, counts, overflow in runs]
        samples = [max(int(counts.sum()) + overflow, 1) for _, counts, overflow in runs]
        found = exceedance_clustering(exceeded, samples)
    except StatsError:
        return []
    if found is None or found.p >= alpha:
        return []
    busiest = [index for (index, _, _), k in zip(runs, exceeded, strict=True) if k == max(exceeded)]
    return [
        f"{variant}: exceedances above {threshold_us} us cluster: run {busiest[0]} holds "
        f"{found.busiest_share:.0%} of them (counts per run {', '.join(map(str, found.counts))}; "
        f"same-rate test p = {found.p:.3g}): a disturbed run or an event that comes and goes, not a "
        "steady tail"
    ]


def _gev(variant: VariantTails, confidence: float, warnings: list[str]) -> GevFit | None:
    """Return the GEV fit of the variant's run maxima (each run one block of its cycles, all threads),
    None with fewer than 10 runs; a failed fit is a warning, a heavy tail too."""
    runs = [r for r in variant.runs if r.statistics.get("max") is not None and r.cycles > 0]
    if len(runs) < GEV_MIN_RUNS:
        return None
    block = int(np.median([r.cycles for r in runs]))
    periods = tuple(r for r in GEV_RETURN_CYCLES if r > block)
    if not periods:
        return None
    maxima = [float(r.statistics["max"] or 0.0) for r in runs]
    try:
        fit = gev_fit(maxima, block, periods, confidence, resamples=GEV_RESAMPLES)
    except StatsError as error:
        warnings.append(f"{variant.name}: no GEV fit ({error})")
        return None
    if fit.heavy_tail:
        warnings.append(
            f"{variant.name}: the run maxima have a heavy tail (GEV shape {fit.shape_xi:.2f} > 0):"
            " return levels grow without bound and long extrapolations are fragile"
        )
    return fit

"""The end-of-run summary: per variant, how many boots ended how, and each metric's median and range;
with two or more variants, the comparison of each against the first (the baseline).

Counts come from the final attempt at each position (a superseded, re-run attempt is counted only as
disturbed). Medians, minima and maxima are over the measured (not warm-up) ok boots, in seconds.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bootscope.lab.plans.board import REBOOT_COLD, REBOOT_KEXEC
from bootscope.metrics import (
    BOARD_METRICS,
    BOARD_REBOOT_METRICS,
    COMPARED_METRICS,
    IMAGE_COMPARED_METRICS,
    IMAGE_SUMMARY_METRICS,
    KERNEL_INIT_S,
    KEXEC_DOWNTIME_S,
    KEXEC_METRICS,
    POWERON_TO_KERNEL_S,
    PREKERNEL_METRICS,
    RESTART_TO_MARKER_S,
    SSH_METRICS,
    SUMMARY_METRICS,
    USERSPACE_S,
    unit_of,
)
from bootscope.model import Comparison, LikeForLike, Outcome
from bootscope.stats.compare import Options, compare_many
from bootscope.store import Store
from bootscope.store.records import BootRecord, ExperimentRecord


@dataclass(frozen=True, slots=True)
class MetricSpread:
    """One metric over a variant's measured ok boots (seconds); ``n`` is how many boots reached it."""

    n: int
    median: float | None
    min: float | None
    max: float | None


@dataclass(frozen=True, slots=True)
class VariantSummary:
    """One variant's boots: measured ok and failed, warm-ups, disturbed attempts, failed attempts
    booted again (``retried``, --retries) and metric spreads."""

    name: str
    ok: int
    failed: int
    warmup: int
    disturbed: int
    metrics: dict[str, MetricSpread] = field(default_factory=dict)
    retried: int = 0


def summarize(
    boots: Sequence[BootRecord], variants: Sequence[str], metrics: Sequence[str] = SUMMARY_METRICS
) -> list[VariantSummary]:
    """Return one summary per name in ``variants`` (in that order) from an experiment's stored boots,
    with the spread of each of ``metrics`` (default: the boot summary's)."""
    result = []
    for name in variants:
        mine = [boot for boot in boots if boot.variant == name]
        final = [boot for boot in mine if not boot.superseded]
        measured = [boot for boot in final if not boot.warmup]
        ok = [boot for boot in mine if boot.counts]
        spreads = {}
        for metric in metrics:
            values = [v for v in (boot.metrics.get(metric) for boot in ok) if v is not None]
            spreads[metric] = MetricSpread(
                n=len(values),
                median=statistics.median(values) if values else None,
                min=min(values) if values else None,
                max=max(values) if values else None,
            )
        result.append(
            VariantSummary(
                name=name,
                ok=len(ok),
                failed=len(measured) - len(ok),
                warmup=sum(1 for boot in final if boot.warmup),
                disturbed=sum(1 for boot in mine if boot.disturbed),
                metrics=spreads,
                retried=sum(1 for boot in mine if boot.superseded and boot.outcome != Outcome.OK),
            )
        )
    return result


def failed_boots(boots: Sequence[BootRecord]) -> list[BootRecord]:
    """Return the final attempts that did not end ok (warm-ups included), in run order."""
    return [boot for boot in boots if not boot.superseded and boot.outcome != Outcome.OK]


MIN_COMPARED_N = 2  # compare needs at least two samples a side


def compare_variants(
    samples_by_metric: Mapping[str, Mapping[str, Sequence[float]]],
    variants: Sequence[str],
    options: Options | None = None,
) -> tuple[list[list[Comparison]], list[str]]:
    """Return, per metric of ``samples_by_metric`` (metric -> variant -> values in seconds, measured ok
    boots), the comparisons of every other variant against the first of ``variants`` (the baseline),
    and notes naming what was left out. A metric is left out when the baseline has fewer than two
    values; a variant, when it has. Needs at least two variants, else returns no comparison.
    Raises StatsError only for NaN or infinite values."""
    comparisons: list[list[Comparison]] = []
    notes: list[str] = []
    if len(variants) < 2:
        return comparisons, notes
    baseline, others = variants[0], variants[1:]
    for metric, by_variant in samples_by_metric.items():
        base = by_variant.get(baseline, [])
        if len(base) < MIN_COMPARED_N:
            notes.append(f"{metric}: baseline {baseline} has {len(base)} value(s); not compared")
            continue
        compared = {}
        for name in others:
            values = by_variant.get(name, [])
            if len(values) >= MIN_COMPARED_N:
                compared[name] = values
            else:
                notes.append(f"{metric}: {name} has {len(values)} value(s); not compared")
        if compared:
            unit = unit_of(metric)
            comparisons.append(compare_many(base, compared, metric, unit, options, baseline_name=baseline))
    return comparisons, notes


@dataclass(frozen=True, slots=True)
class RunSummary:
    """What a finished run says: per-variant summaries, the final attempts that failed, each other
    variant compared with the first per compared metric, and notes on what was not compared."""

    experiment: ExperimentRecord
    summaries: list[VariantSummary]
    failed: list[BootRecord]
    comparisons: list[list[Comparison]]
    compare_notes: list[str]
    metrics: tuple[str, ...]
    stored: int = 0
    # Each compared variant's like-for-like guard against the baseline, by variant name.
    like_for_like: dict[str, LikeForLike] = field(default_factory=dict)


def workload_metrics(plan: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Return (summarised metrics, compared metrics) for a stored plan's workload: a kexec run's
    reboot metrics, a run of system images (full userspace boots) the userspace ones, else a boot
    run's."""
    if plan.get("workload") == "kexec" or plan.get("command") == "kexec":
        return KEXEC_METRICS, KEXEC_METRICS
    if plan.get("workload") == "ssh":  # a machine rebooted over SSH
        return SSH_METRICS, SSH_METRICS
    if plan.get("workload") == "board":  # a board booted from power-on (labgrid)
        named = [str(variant.get("reboot")) for variant in plan.get("variants") or ()]
        return board_summary_metrics(named or str(plan.get("reboot") or REBOOT_COLD).split(","))
    variants = plan.get("variants") or []
    if variants and all(isinstance(v, dict) and v.get("image") for v in variants):
        return IMAGE_SUMMARY_METRICS, IMAGE_COMPARED_METRICS
    return SUMMARY_METRICS, COMPARED_METRICS


def board_summary_metrics(ways: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Return (summarised, compared) metrics of a board run rebooted ``ways``: cold boots alone, their
    power-on metrics; with warm or kexec reboots, first the one number every way has (from the order
    that restarted the board to its marker), then each way's own, and only what every way has is
    compared."""
    if all(way == REBOOT_COLD for way in ways):
        return BOARD_METRICS, BOARD_METRICS
    shown = [RESTART_TO_MARKER_S]
    if REBOOT_COLD in ways:
        shown.append(POWERON_TO_KERNEL_S)
    shown += [name for name in BOARD_REBOOT_METRICS if name != KEXEC_DOWNTIME_S or REBOOT_KEXEC in ways]
    shown += [KERNEL_INIT_S, USERSPACE_S]
    return tuple(shown), (RESTART_TO_MARKER_S, KERNEL_INIT_S, USERSPACE_S)


def summarize_run(store: Store, experiment_id: int, options: Options | None = None) -> RunSummary:
    """Return the summary of a stored run (boot or kexec), read back from ``store``; raises
    StoreError for an unknown run, StatsError only for NaN or infinite values."""
    experiment = store.experiment(experiment_id)
    boots = store.boots(experiment.id)
    names = [v.name for v in experiment.variants]
    shown, compared = workload_metrics(experiment.plan)
    if experiment.plan.get("workload") == "board":  # what its console showed before the kernel
        before = tuple(name for name in PREKERNEL_METRICS if any(store.samples(experiment.id, name).values()))
        shown, compared = (*shown[:1], *before, *shown[1:]), (*compared[:1], *before, *compared[1:])
        # a reboot's own metrics where a boot has them (none has reboot_blind_s under -icount)
        shown = tuple(
            name
            for name in shown
            if name not in BOARD_REBOOT_METRICS or any(store.samples(experiment.id, name).values())
        )
    comparisons, notes = compare_variants(
        {metric: store.samples(experiment.id, metric) for metric in compared}, names, options
    )
    from bootscope.analyze.like_for_like import like_for_like
    from bootscope.usecases.boot_facts import facts_by_variant

    facts = facts_by_variant(names, boots)  # the boots read above: no second query
    guards = {name: like_for_like(facts.get(names[0], []), facts.get(name, [])) for name in names[1:]}
    return RunSummary(
        experiment=experiment,
        summaries=summarize(boots, names, shown),
        failed=failed_boots(boots),
        comparisons=comparisons,
        compare_notes=notes,
        metrics=shown,
        stored=len(boots),
        like_for_like=guards,
    )

"""What `report`, `trace` and `plot` draw: boots analysed from log files or a stored run's records.

This is where the stages meet for the picture commands (files/store -> parse -> analyze -> stats);
the renderers in ``bootscope.report`` only receive the finished views.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

from bootscope.analyze.breakdown import analyze_boot
from bootscope.analyze.components import KINDS
from bootscope.analyze.stored import analyze_stored_boot
from bootscope.analyze.systemd import systemd_accounting
from bootscope.errors import InputError, StatsError
from bootscope.metrics import EXPORT_METRICS, KEXEC_METRICS, REGISTRY, definition, unit_of
from bootscope.model import Comparison, Outcome, Sample, SideSummary
from bootscope.parse import parse_log
from bootscope.sources.files import read_text_lines
from bootscope.stats.attribution import DiffResult
from bootscope.stats.compare import Options, compare_many
from bootscope.stats.summary import summarize
from bootscope.store.db import Store
from bootscope.store.records import BootRecord
from bootscope.usecases.summary import workload_metrics
from bootscope.usecases.view_types import BootView, FailedBoot, MetricValues, ReportView, RunView


def one_source(logs: Sequence[Path] | None, run: str | None) -> list[Path]:
    """Return the log files to read (none for a stored run); raises InputError unless exactly one
    of ``logs`` and ``run`` is given."""
    if run is not None and logs:
        raise InputError("give either log files or --run, not both")
    if run is None and not logs:
        raise InputError("give a log file or --run ID")
    return list(logs or [])


def boot_view(logs: Sequence[Path] | None, run: str | None, db: str, boot: int | None, fmt: str) -> BootView:
    """Return boot ``boot`` of the log files (1-based, default the first) or of the stored run
    ``run`` in ``db`` (its index in the run, default its first boot that counts), analysed. Raises
    InputError for both inputs or none, a boot that is not there or a run with no boot that ended
    ok; StoreError for an unknown run or boot; ParseError for a log with no timestamp."""
    paths = one_source(logs, run)
    if run is None:
        return pick_boot(boots_from_logs(paths, fmt), boot or 1)
    with Store.open(db, create=False) as store:
        exp = store.experiment(run)
        records = store.boots(exp.id)
        if boot is None:
            counting = [b for b in records if b.counts]
            if not counting:
                raise InputError(f"run {exp.id} has no boot that ended OK; choose one with --boot")
            boot = counting[0].index
        return stored_boot(store, exp.id, boot, records)


def report_view(
    logs: Sequence[Path] | None,
    run: str | None,
    db: str,
    *,
    boot: int | None,
    vs: Path | None,
    fmt: str,
    alpha: float,
) -> ReportView:
    """Return what ``report`` draws: the stored run ``run`` in ``db`` (summaries and comparisons at
    ``alpha``, each variant's diff, and as the example boot its boot ``boot``, by the run's index,
    default its first boot that counts; the tune it belongs to, read again without booting), or
    boot ``boot`` (1-based, default the first) of the log files with the first boot of ``vs``
    beside it. Raises InputError for both inputs or none, ``vs`` with a run, or a boot that is not
    there; StoreError for an unknown run."""
    paths = one_source(logs, run)
    if run is not None:
        if vs is not None:
            raise InputError("--vs compares two logs; for a run the comparison table is already there")
        from bootscope.usecases.tune.stored import stored_tune  # the runner's modules: only here

        with Store.open(db, create=False) as store:
            view = run_view(store, run, alpha, with_diffs=True, example_index=boot)
            return ReportView(run=view, tune=stored_tune(store, store.experiment(run).id))
    views = boots_from_logs(paths, fmt)
    main = pick_boot(views, boot or 1)
    other = pick_boot(boots_from_logs([vs], fmt), 1) if vs is not None else None
    return ReportView(boot=main, vs=other, others=tuple(v for v in views if v is not main))


def metric_values(
    logs: Sequence[Path] | None, run: str | None, db: str, metric: str, *, fmt: str, alpha: float
) -> MetricValues:
    """Return ``metric``'s values per log file (each boot one value) or, for the stored run ``run``
    in ``db``, per variant (the boots that count) with each variant's median and interval at
    ``alpha``. Raises InputError for an unknown metric or both inputs or none; StoreError for an
    unknown run."""
    try:
        definition(metric)
    except InputError:
        raise InputError(f"--metric {metric}: choose one of {', '.join(REGISTRY)}") from None
    paths = one_source(logs, run)
    if run is None:
        values: dict[str, list[float]] = {}
        for path in paths:
            for view in boots_from_logs([path], fmt):
                value = getattr(view.breakdown.metrics, metric, None)
                if value is not None:
                    values.setdefault(path.name, []).append(value)
        return MetricValues(values)
    with Store.open(db, create=False) as store:
        # the picture shows values and medians only: no comparison (its power simulation took 20 s)
        view_run = run_view(store, run, alpha, with_example=False, with_comparisons=False)
    values = {v: [] for v in view_run.variants}
    for sample in view_run.samples:
        value = sample.metrics.get(metric)
        if value is not None and sample.outcome is Outcome.OK and not sample.warmup:
            values.setdefault(sample.variant, []).append(value)
    medians = {s.name: (s.median, *(s.median_ci or (None, None))) for s in view_run.summaries.get(metric, ())}
    return MetricValues(values, medians)


def boots_from_logs(paths: Sequence[Path], fmt: str = "auto") -> list[BootView]:
    """Return every boot of the given log files, analysed, in file then boot order.

    Raises InputError for a missing or unreadable file, ParseError for a log with no timestamp.
    """
    views: list[BootView] = []
    for path in paths:
        parsed = parse_log(read_text_lines(str(path)), fmt)
        for number, lines in enumerate(parsed.boots, start=1):
            label = path.name if len(parsed.boots) == 1 else f"{path.name} boot {number}"
            accounting = systemd_accounting(lines)  # a console capture may hold the collector's block
            units = accounting.units if accounting is not None else ()
            views.append(BootView(label, analyze_boot(lines), tuple(lines), units))
    if not views:
        raise InputError(f"no boot found in {', '.join(str(p) for p in paths)}")
    return views


def pick_boot(views: Sequence[BootView], number: int) -> BootView:
    """Return boot ``number`` (1-based, across all inputs); raises InputError if there is none."""
    if not 1 <= number <= len(views):
        raise InputError(f"--boot {number}: the input has {len(views)} boot(s); choose 1 to {len(views)}")
    return views[number - 1]


def _final(boots: Sequence[BootRecord]) -> list[BootRecord]:
    return [b for b in boots if not b.superseded]


def stored_boot(store: Store, exp_id: int, index: int, records: Sequence[BootRecord]) -> BootView:
    """Return the stored boot at position ``index`` of an experiment, analysed exactly as every other
    command analyses it (:func:`bootscope.analyze.stored.analyze_stored_boot`: its variant's marker, the
    console's escape sequences dropped). Raises StoreError if there is no such boot."""
    stored = analyze_stored_boot(store, exp_id, index, records=records)
    return BootView(stored.label, stored.analysis.breakdown, stored.analysis.lines, stored.analysis.units)


def _outcome(value: str) -> Outcome:
    try:
        return Outcome(value)
    except ValueError:
        return Outcome.QEMU_ERROR


def run_view(
    store: Store,
    run: str,
    alpha: float,
    with_example: bool = True,
    with_diffs: bool = False,
    example_index: int | None = None,
    with_comparisons: bool = True,
) -> RunView:
    """Return a stored run as a RunView: samples, per-variant summaries, with ``with_comparisons``
    the comparisons against the first variant (Holm-adjusted; no power advice, which no view
    shows), failed boots, environment (each variant's QEMU command line where they differ),
    optionally an example boot (``example_index``, the run's boot index; default its first boot
    that counts) and, with ``with_diffs``, each other variant's diff against the first
    (``bootscope diff``).

    Raises StoreError for an unknown run, InputError for an ``example_index`` that is not a boot
    of the run; a metric that cannot be compared is left out of the table.
    """
    exp = store.experiment(run)
    records = store.boots(exp.id)
    final = _final(records)
    variants = tuple(v.name for v in exp.variants) or tuple(dict.fromkeys(b.variant for b in final))
    samples = tuple(
        Sample(b.variant, b.index, _outcome(b.outcome), dict(b.metrics), b.warmup, b.disturbed) for b in final
    )
    # The export metrics, kexec's reboot metrics, and those the run's own workload summarises (an
    # image run's userspace ones, as in the end-of-run summary), wherever the boots carry them.
    shown, _compared = workload_metrics(exp.plan)
    candidates = tuple(dict.fromkeys((*EXPORT_METRICS, *KEXEC_METRICS, *shown)))
    metrics = tuple(m for m in candidates if any(s.metrics.get(m) is not None for s in samples))
    summaries: dict[str, tuple[SideSummary, ...]] = {}
    comparisons: list[Comparison] = []
    for metric in metrics:
        values = store.samples(exp.id, metric)
        summaries[metric] = tuple(summarize(v, name, alpha) for name, v in values.items() if v)
        usable = {name: v for name, v in values.items() if len(v) >= 2}
        if with_comparisons and len(usable) >= 2:
            base, *others = usable
            # StatsError: e.g. too few distinct values; the distributions still show the samples.
            with contextlib.suppress(StatsError):
                comparisons += compare_many(
                    usable[base],
                    {n: usable[n] for n in others},
                    metric,
                    unit_of(metric),
                    Options(alpha=alpha, power=False),
                    base,
                )
    failures = tuple(
        FailedBoot(b.variant, b.index, b.outcome, b.reason) for b in final if b.outcome != Outcome.OK
    )
    environment = [(f"host {k}", str(v)) for k, v in sorted(exp.host.items())]
    environment.append(
        ("accelerator", f"{exp.accel} ({exp.accel_reason})" if exp.accel_reason else exp.accel)
    )
    environment += _command_lines(final, variants)
    releases = sorted({b.kernel_release for b in final if b.kernel_release})
    environment.append(("kernel releases", ", ".join(releases) or "not recorded"))
    environment += [("created", exp.created), ("status", exp.status), ("order seed", str(exp.seed))]
    example = None
    if example_index is not None:
        if example_index not in {b.index for b in final}:
            indexes = sorted(b.index for b in final)
            raise InputError(
                f"--boot {example_index}: run {exp.id} has no such boot; its boots are "
                f"{_index_ranges(indexes) or 'none'}"
            )
        example = stored_boot(store, exp.id, example_index, records)
    elif with_example:
        counting = [b for b in final if b.counts]
        if counting:
            example = stored_boot(store, exp.id, counting[0].index, records)
    diffs = _diffs(store, exp.id, variants, alpha) if with_diffs and len(variants) >= 2 else ()
    return RunView(
        title=f"bootscope run {exp.id}",
        variants=variants,
        metrics=metrics,
        samples=samples,
        comparisons=tuple(comparisons),
        summaries=summaries,
        failures=failures,
        environment=tuple(environment),
        example=example,
        diffs=diffs,
    )


def _command_lines(final: Sequence[BootRecord], variants: Sequence[str]) -> list[tuple[str, str]]:
    """Return the QEMU command line as one row when every variant used the same, else one row per
    variant (its first boot's), in the run's variant order."""
    by_variant: dict[str, str] = {}
    for boot in final:
        if boot.command and boot.variant not in by_variant:
            by_variant[boot.variant] = " ".join(boot.command)
    if len(set(by_variant.values())) <= 1:
        return [("QEMU command line", line) for line in list(by_variant.values())[:1]]
    order = [v for v in variants if v in by_variant] + [v for v in by_variant if v not in variants]
    return [(f"QEMU command line ({name})", by_variant[name]) for name in order]


def _index_ranges(indexes: Sequence[int]) -> str:
    """Return sorted boot indexes as ranges: [1, 2, 3, 5] -> "1-3, 5"."""
    ranges: list[list[int]] = []
    for index in indexes:
        if ranges and index == ranges[-1][1] + 1:
            ranges[-1][1] = index
        else:
            ranges.append([index, index])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)


def _diffs(store: Store, run: int, variants: Sequence[str], alpha: float) -> tuple[DiffResult, ...]:
    """Return each variant's diff against the first over every component kind; a variant that
    cannot be compared (fewer than 2 boots reached the metric) is left out."""
    from bootscope.metrics import DEFAULT_METRIC
    from bootscope.usecases.diff import diff_parts, parts_from_run

    _run_id, by_variant = parts_from_run(store, run, DEFAULT_METRIC)
    found = []
    base = variants[0]
    for name in variants[1:]:
        with contextlib.suppress(InputError, StatsError):
            found.append(
                diff_parts(
                    by_variant.get(base, []),
                    by_variant.get(name, []),
                    metric=DEFAULT_METRIC,
                    names=(base, name),
                    kinds=KINDS,
                    source=f"run {run}",
                    alpha=alpha,
                    fdr=alpha,
                )
            )
    return tuple(found)

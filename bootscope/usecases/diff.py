"""``bootscope diff``: which components of the boot moved between two variants, and by how much.

The boots come from a stored run (each read through the one stored-boot analysis, its total from
the stored metric, as ``compare`` reads it) or from log files and directories (multi-boot logs
split as ``analyze`` splits them). Each boot becomes a :class:`BootParts`; the comparison itself is
``bootscope.stats.attribution``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bootscope.analyze.components import (
    GAP,
    INITCALL,
    KINDS,
    PHASE,
    Components,
    additive_kind,
    boot_components,
    kinds_for,
    top_gap_names,
)
from bootscope.analyze.like_for_like import BootFacts, facts_from_identity, like_for_like, printing_differs
from bootscope.errors import BootscopeError, InputError
from bootscope.metrics import DEFAULT_METRIC, KERNEL_INIT_S, LOGIN_PROMPT_S, SYSTEMD_USERSPACE_S, definition
from bootscope.model import LikeForLike
from bootscope.sources.paths import side_label
from bootscope.stats.attribution import ComponentSamples, DiffResult, attribute

if TYPE_CHECKING:  # sqlalchemy: only for stored runs
    from bootscope.store import Store

# Gaps beyond the boot's largest few are where a moved line shows up too: keep many per boot.
GAPS_PER_BOOT = 20


@dataclass(frozen=True, slots=True)
class BootParts:
    """One boot: its total (s, None where it did not reach the metric), its components (s), its
    kernel release (None where the log did not say), a label, the names of the lines that open
    its largest gaps (the gap components worth comparing) and what shapes its time besides the
    change under test (for the like-for-like guard; None: not read)."""

    total_s: float | None
    components: Components
    kernel: str | None
    label: str
    top_gaps: frozenset[str] = frozenset()
    facts: BootFacts | None = None


def check_kinds(by: Sequence[str]) -> tuple[str, ...]:
    """Return the component kinds named by ``--by`` (every kind when empty); raises InputError for
    an unknown one."""
    kinds = tuple(dict.fromkeys(by)) or KINDS
    unknown = [kind for kind in kinds if kind not in KINDS]
    if unknown:
        raise InputError(f"--by {unknown[0]}: choose {', '.join(KINDS)}")
    return kinds


def parts_from_run(
    store: Store,
    run: int | str,
    metric: str,
    kinds: Sequence[str] = KINDS,
    every_component: bool = False,
) -> tuple[int, dict[str, list[BootParts]]]:
    """Return the run's id and, per variant in the run's order, its ok, final, measured boots as
    BootParts (total from the stored metric). The components are those that decompose ``metric``
    (for kernel_init_s, none after ``Run /init``), or every one with ``every_component`` (a
    reference file keeps them all). Raises StoreError for an unknown run."""
    from bootscope.analyze.stored import analyze_stored_boot  # the analysis stack: only when used

    record = store.experiment(run)
    boots = store.boots(record.id)
    result: dict[str, list[BootParts]] = {variant.name: [] for variant in record.variants}
    kernel_only = metric == KERNEL_INIT_S and not every_component
    asked = tuple(kinds) if every_component else kinds_for(metric, kinds)
    for boot in boots:
        if not boot.counts:
            continue
        stored = analyze_stored_boot(store, record.id, boot.index, records=boots, top_n=GAPS_PER_BOOT)
        analysis = stored.analysis
        breakdown = analysis.breakdown
        parts = boot_components(
            breakdown, analysis.units, kinds=asked, kernel_only=kernel_only, lines=analysis.lines
        )
        total = boot.metrics.get(metric)
        release = boot.kernel_release or breakdown.identity.release
        host = boot.placement.get("host") if boot.placement else None
        facts = facts_from_identity(breakdown.identity, boot.accel, str(host) if host else None)
        found = BootParts(total, parts, release, stored.label, top_gap_names(breakdown), facts)
        result.setdefault(boot.variant, []).append(found)
    return record.id, result


def parts_from_logs(
    paths: Sequence[Path], metric: str, kinds: Sequence[str] = KINDS, *, strict: bool = False
) -> tuple[list[BootParts], list[str]]:
    """Return every boot of the given files and directories (files in name order, dot files left
    out; multi-boot logs split) as BootParts, and warnings for files that could not be read (with
    ``strict``, such a file raises instead: InputError, or ParseError for a log with no timestamp).
    Raises InputError when no boot is found."""
    from bootscope.analyze import analyze_boot
    from bootscope.analyze.systemd import systemd_accounting
    from bootscope.parse import parse_log
    from bootscope.sources.files import read_text_lines
    from bootscope.sources.paths import log_files

    found: list[BootParts] = []
    warnings: list[str] = []
    kernel_only = metric == KERNEL_INIT_S
    asked = kinds_for(metric, kinds)
    for file in log_files(paths):
        try:
            parsed = parse_log(read_text_lines(str(file)))
        except BootscopeError as error:
            if strict:
                raise
            warnings.append(f"{file}: skipped: {error}")
            continue
        for number, lines in enumerate(parsed.boots, start=1):
            breakdown = analyze_boot(lines, top_n=GAPS_PER_BOOT)
            accounting = systemd_accounting(lines)
            units = accounting.units if accounting is not None else ()
            parts = boot_components(breakdown, units, kinds=asked, kernel_only=kernel_only, lines=lines)
            value = getattr(breakdown.metrics, metric, None)
            label = file.name if len(parsed.boots) == 1 else f"{file.name} boot {number}"
            release = breakdown.identity.release
            facts = facts_from_identity(breakdown.identity)
            found.append(BootParts(value, parts, release, label, top_gap_names(breakdown), facts))
    if not found:
        raise InputError(f"no boot found in {', '.join(str(p) for p in paths)}")
    return found, warnings


def component_samples(a: Sequence[BootParts], b: Sequence[BootParts]) -> list[ComponentSamples]:
    """Return every component seen on either side with its values per side (s), in first-seen order;
    of the gaps, only those among some boot's largest (every line has a silence after it)."""
    keys: dict[tuple[str, str], None] = {}
    wanted_gaps = frozenset().union(*(boot.top_gaps for boot in (*a, *b)))
    for boot in (*a, *b):
        keys.update(dict.fromkeys(k for k in boot.components if k[0] != GAP or k[1] in wanted_gaps))
    return [
        ComponentSamples(
            kind,
            name,
            tuple(boot.components[(kind, name)] for boot in a if (kind, name) in boot.components),
            tuple(boot.components[(kind, name)] for boot in b if (kind, name) in boot.components),
            len(a),
            len(b),
        )
        for kind, name in keys
    ]


def totals(boots: Sequence[BootParts], side: str, metric: str) -> list[float]:
    """Return the side's totals (s); raises InputError when fewer than 2 boots reached ``metric``."""
    values = [boot.total_s for boot in boots if boot.total_s is not None]
    if len(values) < 2:
        raise InputError(f"{side}: {len(values)} boot(s) reached {metric}; a diff needs at least 2 a side")
    return values


def diff_parts(
    a: Sequence[BootParts],
    b: Sequence[BootParts],
    *,
    metric: str,
    names: tuple[str, str],
    kinds: Sequence[str],
    source: str,
    alpha: float,
    fdr: float,
    notes: Sequence[str] = (),
    compared: frozenset[str] = frozenset(),
) -> DiffResult:
    """Return the diff of side b against side a, with the like-for-like guard of the two sides'
    facts: where they print differently (one side boots with initcall_debug), initcalls and gaps seen
    on one side only are set apart, not called moved. ``compared``: the facts the two sides are
    meant to differ in (an alert's revisions are kernel releases), which the guard leaves out.
    Raises InputError for a side with fewer than 2 totals, StatsError for bad alpha."""
    notes = [*notes, *_phase_order_notes(a, names[0]), *_phase_order_notes(b, names[1])]
    found = like_for_like([p.facts for p in a if p.facts], [p.facts for p in b if p.facts])
    guard = LikeForLike(tuple(d for d in found.differences if d.field not in compared))
    attribution = attribute(
        totals(a, names[0], metric),
        totals(b, names[1], metric),
        component_samples(a, b),
        metric=metric,
        alpha=alpha,
        fdr=fdr,
        name_a=names[0],
        name_b=names[1],
        additive_kind=additive_kind(metric),
        printed_kinds=frozenset({INITCALL, GAP}) if printing_differs(guard) else frozenset(),
    )
    shown = kinds_for(metric, kinds)
    return DiffResult(metric, names[0], names[1], shown, source, attribution, tuple(notes), guard)


def _phase_order_notes(boots: Sequence[BootParts], side: str) -> list[str]:
    """Return a note per phase that is negative in some boot of ``side``: its milestones came in
    another order (a kernel version that prints ``Memory: ...`` after ``smp: Bringing up``, as 6.12
    does), so it and its neighbour are only meaningful together."""
    counts: dict[str, int] = {}
    for boot in boots:
        for (kind, name), value in boot.components.items():
            if kind == PHASE and value < 0:
                counts[name] = counts.get(name, 0) + 1
    return [
        f"{side}: phase {name} is negative in {n} boot(s): its milestones come in another order in "
        "this kernel; read it together with the phase before it"
        for name, n in counts.items()
    ]


def diff_run(
    store: Store,
    run: int | str,
    *,
    metric: str,
    kinds: Sequence[str],
    baseline: str | None,
    variant: str | None,
    alpha: float,
    fdr: float,
) -> DiffResult:
    """Return the diff of ``variant`` (default: the first other than the baseline) against
    ``baseline`` (default: the run's first variant) of a stored run. Raises StoreError for an
    unknown run, InputError for an unknown variant or a run with one variant."""
    run_id, by_variant = parts_from_run(store, run, metric, kinds)
    names = list(by_variant)
    if len(names) < 2:
        raise InputError(f"run {run_id} has {len(names)} variant(s); diff needs two")
    base = baseline or names[0]
    for given in (base, variant):
        if given is not None and given not in by_variant:
            raise InputError(f"variant {given!r} is not in run {run_id} (variants: {', '.join(names)})")
    others = [name for name in names if name != base]
    chosen = variant or others[0]
    notes = []
    if variant is None and len(others) > 1:
        notes.append(f"run {run_id} has {len(others)} variants besides {base}; showing {chosen} (--variant)")
    return diff_parts(
        by_variant[base], by_variant[chosen], metric=metric, names=(base, chosen), kinds=kinds,
        source=f"run {run_id}", alpha=alpha, fdr=fdr, notes=notes,
    )  # fmt: skip


def explain_steps(
    store: Store,
    run: int | str,
    steps: Sequence[int],
    *,
    metric: str,
    kinds: Sequence[str],
    alpha: float,
    fdr: float,
) -> list[tuple[int, DiffResult]]:
    """Return, for each change point of a stored history (``steps``: the position before each step,
    positions being the run's variants in order), the diff of the position after it against the one
    before: which components' change explains the total's. Raises as :func:`diff_parts` does."""
    run_id, by_variant = parts_from_run(store, run, metric, kinds)
    names = list(by_variant)
    found = []
    for step in steps:
        before, after = names[step], names[step + 1]
        result = diff_parts(
            by_variant[before], by_variant[after], metric=metric, names=(before, after), kinds=kinds,
            source=f"run {run_id}", alpha=alpha, fdr=fdr,
        )  # fmt: skip
        found.append((step, result))
    return found


def diff(
    run: str | None,
    a_logs: Sequence[Path] | None,
    b_logs: Sequence[Path] | None,
    *,
    db: str,
    metric: str,
    by: Sequence[str],
    top: int,
    baseline: str | None,
    variant: str | None,
    alpha: float,
    fdr: float,
    warn: Callable[[str], None],
) -> DiffResult:
    """Return the diff of a stored run's ``variant`` against its ``baseline`` (``run`` in ``db``), or
    of the boots in ``b_logs`` against those in ``a_logs`` (log files and directories), over the
    component kinds ``by`` (every kind when empty); ``top`` is the number of components to be shown.
    Log files skipped are handed to ``warn``, one line each, before the comparison.
    Raises InputError for an unknown metric or kind, a metric the kinds cannot decompose, ``top``
    below 1, ``fdr`` outside (0, 1), both inputs or none, or a side with fewer than 2 totals;
    StoreError for an unknown run."""
    definition(metric)
    kinds = check_kinds(by)
    if kinds == ("unit",) and metric == DEFAULT_METRIC:
        raise InputError(
            f"systemd's units start after Run /init, outside {DEFAULT_METRIC}: give --metric"
            f" {SYSTEMD_USERSPACE_S} (or {LOGIN_PROMPT_S}) with --by unit"
        )
    if top < 1:
        raise InputError("--top must be at least 1")
    if not 0 < fdr < 1:
        raise InputError(f"--fdr must lie between 0 and 1, not {fdr}")
    if (run is None) == (a_logs is None and b_logs is None):
        raise InputError("give either RUN or --a-logs and --b-logs")
    if run is not None:
        from bootscope.store import Store  # sqlalchemy: only for a stored run

        with Store.open(db, create=False) as store:
            return diff_run(
                store, run, metric=metric, kinds=kinds, baseline=baseline, variant=variant,
                alpha=alpha, fdr=fdr,
            )  # fmt: skip
    if not a_logs or not b_logs:
        raise InputError("give both --a-logs and --b-logs")
    side_a, warn_a = parts_from_logs(a_logs, metric, kinds)
    side_b, warn_b = parts_from_logs(b_logs, metric, kinds)
    for line in (*warn_a, *warn_b):
        warn(line)
    names = (side_label(a_logs, "a"), side_label(b_logs, "b"))
    if names[0] == names[1]:
        names = ("a", "b")
    return diff_parts(
        side_a, side_b, metric=metric, names=names, kinds=kinds, source="logs", alpha=alpha, fdr=fdr
    )


def split_run(text: str) -> tuple[str, str | None]:
    """Return the run and the variant (None when not named) of ``RUN`` or ``RUN:VARIANT``; raises
    InputError for ``RUN:`` with no variant."""
    run, colon, variant = text.partition(":")
    if colon and not variant:
        raise InputError(f"{text!r}: expected RUN or RUN:VARIANT")
    return run, variant or None


def run_variant_parts(
    store: Store, text: str, metric: str, every_component: bool = False
) -> tuple[str, list[BootParts]]:
    """Return the variant named by ``RUN[:VARIANT]`` (a run of one variant needs no name) and its
    counting boots as BootParts (see :func:`parts_from_run`). Raises InputError for a missing or
    unknown variant, StoreError for an unknown run."""
    run, variant = split_run(text)
    run_id, by_variant = parts_from_run(store, run, metric, every_component=every_component)
    if variant is None:
        if len(by_variant) != 1:
            raise InputError(
                f"run {run_id} has variants {', '.join(by_variant)}; name one as {run_id}:VARIANT"
            )
        variant = next(iter(by_variant))
    if variant not in by_variant:
        raise InputError(f"variant {variant!r} is not in run {run_id} (variants: {', '.join(by_variant)})")
    return variant, by_variant[variant]


def diff_stored_sides(db: str, a: str, b: str, *, metric: str, alpha: float, fdr: float) -> DiffResult:
    """Return the diff of the stored boots ``b`` against ``a``, each ``RUN[:VARIANT]`` (two runs, or
    two variants of one run), over every component kind. Raises InputError for an unknown metric or
    variant, the same boots on both sides, or a side with fewer than 2 totals; StoreError for an
    unknown run."""
    from bootscope.store import Store  # sqlalchemy: only for stored runs

    definition(metric)
    kinds = check_kinds(())
    if not 0 < fdr < 1:
        raise InputError(f"--fdr must lie between 0 and 1, not {fdr}")
    with Store.open(db, create=False) as store:
        name_a, side_a = run_variant_parts(store, a, metric)
        name_b, side_b = run_variant_parts(store, b, metric)
    names = (a if ":" in a else f"{a}:{name_a}", b if ":" in b else f"{b}:{name_b}")
    if names[0] == names[1]:
        raise InputError(f"{a} and {b} are the same boots: name two runs or two variants")
    return diff_parts(
        side_a, side_b, metric=metric, names=names, kinds=kinds, source=f"runs {a} and {b}",
        alpha=alpha, fdr=fdr,
    )  # fmt: skip

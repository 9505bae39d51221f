"""A metric across an ordered series of kernels (or any ordered variants), and its change points.

A history is a plan whose variants are the positions of the series, in order; it runs through the
ordinary executor (interleaved, so host drift does not masquerade as a change between versions)
or is read back from a stored run. The analysis is ``bootscope.stats.changepoint``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from bootscope import defaults, metrics
from bootscope.errors import BootError, InputError
from bootscope.lab.plans.boot import Plan, VariantSpec, plan_from_dict, plan_with_settings, validate_plan
from bootscope.lab.plans.settings import GivenSettings
from bootscope.lab.progress import Reporter
from bootscope.stats.changepoint import ChangePointResult, detect_change_points
from bootscope.stats.summary import median_ci
from bootscope.store import Store
from bootscope.usecases.run import start_experiment

if TYPE_CHECKING:
    from bootscope.stats.attribution import DiffResult

# `debian:<flavour>` series: every linux-image-<upstream>-<abi>-<flavour>-amd64 the index offers.
_DEBIAN_SERIES = {"cloud": "cloud-amd64", "amd64": "amd64", "rt": "rt-amd64"}
_APT_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True)
class Position:
    """One position of the series: the variant name, the kernel spec it booted (if known), its
    samples, median and distribution-free median interval (metric's unit; None when n is too small)."""

    name: str
    kernel: str
    n: int
    median: float
    median_ci: tuple[float, float] | None
    samples: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class HistoryResult:
    """The series in order and its change points (``change_points.change_points[i].index`` is the
    position before the step)."""

    run: int | None
    metric: str
    unit: str
    positions: tuple[Position, ...]
    change_points: ChangePointResult


def _version_key(package: str, suffix: str) -> tuple[tuple[int, ...], int] | None:
    # 6.1's packages: linux-image-6.1.0-47-cloud-amd64 (ABI number 47); 6.12's (trixie's, and in
    # bookworm-backports' style): linux-image-6.12.57+deb12-cloud-amd64 (the stable release is the key).
    match = re.fullmatch(rf"linux-image-(\d+(?:\.\d+)*)-(\d+)-{re.escape(suffix)}", package)
    if match is not None:
        return tuple(int(part) for part in match.group(1).split(".")), int(match.group(2))
    match = re.fullmatch(rf"linux-image-(\d+(?:\.\d+)+)\+deb\d+-{re.escape(suffix)}", package)
    if match is not None:
        return tuple(int(part) for part in match.group(1).split(".")), 0
    return None


def debian_series(flavour: str) -> list[str]:
    """Return ``debian:linux-image-X.Y.Z-N-<flavour>`` (6.1's naming) and
    ``debian:linux-image-X.Y.Z+debN-<flavour>`` (6.12's) specs for every such package that the local
    package index offers, oldest first (by upstream version, then ABI number N).

    Reads the local apt cache only (``apt-cache pkgnames``/``show``; run ``apt-get update`` for a
    fresh list). Raises BootError without apt-cache, InputError for an unknown flavour or none found.
    """
    if flavour not in _DEBIAN_SERIES:
        raise InputError(f"unknown Debian flavour {flavour!r}; use one of {', '.join(_DEBIAN_SERIES)}")
    if shutil.which("apt-cache") is None:
        raise BootError("apt-cache not found: a debian: series needs apt (or list kernels with --versions)")
    suffix = _DEBIAN_SERIES[flavour]
    names = _apt(["apt-cache", "pkgnames", "linux-image-"]).split()
    keyed = sorted((key, name) for name in set(names) if (key := _version_key(name, suffix)) is not None)
    if not keyed:
        raise InputError(f"the package index offers no linux-image-*-{suffix}; run apt-get update")
    # pkgnames also lists names only referred to; keep those with a downloadable version.
    shown = _apt(["apt-cache", "show", "--no-all-versions", *(name for _, name in keyed)], check=False)
    real = set(re.findall(r"^Package: (\S+)$", shown, flags=re.MULTILINE))
    return [f"debian:{name}" for _, name in keyed if name in real]


def _apt(argv: list[str], check: bool = True) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=_APT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise BootError(f"{argv[0]} failed: {error}") from error
    if check and done.returncode != 0:
        raise BootError(f"{' '.join(argv[:2])} failed: {done.stderr.strip()[:200]}")
    return done.stdout


def resolve_versions(spec: str, versions: str) -> list[str]:
    """Return the kernel specs of the series, in order.

    ``versions`` is ``all`` (for ``debian:<flavour>``: every offered package, see
    :func:`debian_series`) or a comma-separated list; a bare ABI number N in that list means
    ``linux-image-<upstream>-N-<flavour>`` of the same flavour, other entries are kernel specs or paths
    as given. Raises InputError for ``all`` with a spec that is not a Debian flavour, or fewer than
    two positions.
    """
    flavour = spec.removeprefix("debian:") if spec.startswith("debian:") else None
    if versions.strip() == "all":
        if flavour is None:
            raise InputError("--versions all needs a debian:<flavour> spec; list the kernels otherwise")
        series = debian_series(flavour)
    else:
        entries = [item.strip() for item in versions.split(",") if item.strip()]
        series = []
        known: list[str] | None = None
        for entry in entries:
            if entry.isdigit():
                if flavour is None:
                    raise InputError(f"--versions {entry}: a bare number needs a debian:<flavour> spec")
                known = known if known is not None else debian_series(flavour)
                match = [s for s in known if re.search(rf"-{entry}-{_DEBIAN_SERIES[flavour]}$", s)]
                if not match:
                    raise InputError(f"--versions {entry}: the package index has no such {flavour} kernel")
                series.append(match[-1])
            else:
                series.append(entry)
    if len(series) < 2:
        raise InputError(f"a history needs at least two kernels, got {len(series)}")
    return series


def position_name(kernel: str, index: int) -> str:
    """Return a variant name for position ``index`` booting ``kernel`` (unique, readable)."""
    match = re.search(r"(\d+(?:\.\d+)*-\d+)-[a-z]", kernel)
    label = match.group(1) if match else re.sub(r"[^A-Za-z0-9_.+-]+", "-", kernel.rsplit("/", 1)[-1])
    return f"{index:02d}-{label}"[:64]


def history_plan(kernels: Sequence[str], base: VariantSpec, template: Plan) -> Plan:
    """Return ``template`` with one variant per kernel of the series (in order), each otherwise
    ``base``. Raises InputError if the plan is not valid."""
    variants = tuple(
        replace(base, name=position_name(kernel, i), kernel=kernel) for i, kernel in enumerate(kernels)
    )
    return validate_plan(replace(template, variants=variants))


def analyse_history(
    order: Sequence[tuple[str, str]],
    samples_by_variant: Mapping[str, Sequence[float]],
    metric: str,
    unit: str = "s",
    alpha: float = 0.05,
    seed: int = 0,
    permutations: int = 2000,
    run: int | None = None,
) -> HistoryResult:
    """Return the series' per-position medians with intervals and its change points.

    ``order`` lists (variant name, kernel) in series order; samples are in the metric's unit.
    Raises InputError for a position without samples; StatsError as detect_change_points does.
    """
    positions = []
    for name, kernel in order:
        values = tuple(float(v) for v in samples_by_variant.get(name, ()))
        if not values:
            raise InputError(f"position {name} has no successful boot with {metric}; nothing to compare")
        positions.append(
            Position(
                name=name,
                kernel=kernel,
                n=len(values),
                median=float(np.median(values)),
                median_ci=median_ci(values, alpha),
                samples=values,
            )
        )
    result = detect_change_points(
        [p.samples for p in positions], alpha=alpha, permutations=permutations, seed=seed
    )
    return HistoryResult(run=run, metric=metric, unit=unit, positions=tuple(positions), change_points=result)


def run_history(
    plan: Plan,
    store: Store,
    metric: str,
    alpha: float = 0.05,
    reporter: Reporter | None = None,
) -> HistoryResult:
    """Run ``plan`` (from :func:`history_plan`; variants in series order) through the executor, every
    boot stored, and return the analysed history. Raises as ``start_experiment`` and
    :func:`analyse_history` do."""
    result = start_experiment(plan, store, reporter)
    return history_from_run(store, result.experiment.id, metric, alpha)


def history_from_run(store: Store, run: int | str, metric: str, alpha: float = 0.05) -> HistoryResult:
    """Return the history of a stored run whose variants, in their stored order, are the series.

    The change-point permutations are seeded with the run's seed, so the answer is reproducible.
    Raises StoreError for an unknown run, InputError for a run with fewer than two variants or a
    variant without samples."""
    record = store.experiment(run)
    plan = plan_from_dict(record.plan)
    if len(plan.variants) < 2:
        raise InputError(f"run {record.id} has {len(plan.variants)} variant(s); a history needs two or more")
    order = [(variant.name, variant.kernel) for variant in plan.variants]
    samples = store.samples(record.id, metric)
    return analyse_history(order, samples, metric, "s", alpha, seed=record.seed, run=record.id)


@dataclass(frozen=True, slots=True)
class HistoryRequest:
    """What ``bootscope history`` was asked for: boot the series that ``spec`` and ``versions`` name
    (see :func:`resolve_versions`) on one machine (``append``, ``smp``, ``mem_mb`` MiB, TCG
    ``icount_shift``) with run ``settings``, or read stored run ``from_run``; the series of
    ``metric``, its change points at ``alpha``, and per change point the components of the ``by``
    kinds that moved."""

    metric: str
    alpha: float = defaults.ALPHA
    spec: str | None = None
    versions: str = "all"
    from_run: str | None = None
    settings: GivenSettings | None = None
    append: str = ""
    smp: int = defaults.DEFAULT_SMP
    mem_mb: int = defaults.DEFAULT_MEM_MB
    icount_shift: int | None = None
    by: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class HistoryOutcome:
    """A history and, with ``--by``, per change point (the position before the step) the diff of
    the positions around it (None without ``--by``)."""

    result: HistoryResult
    explained: tuple[tuple[int, DiffResult], ...] | None = None


def history_command(request: HistoryRequest, db: str, reporter: Reporter | None = None) -> HistoryOutcome:
    """Return the history ``request`` asks for: the series booted now (every boot stored in ``db``)
    or read from a stored run, and with ``by`` the components that moved at each change point.
    Raises InputError for an unknown metric or --by kind, neither or both of SPEC and --from-run, a
    bad series or plan; StoreError for an unknown run; as :func:`run_history` does."""
    from bootscope.usecases.diff import check_kinds  # the diff machinery: only with --by

    metrics.definition(request.metric)
    if request.by:
        check_kinds(request.by)
    if (request.spec is None) == (request.from_run is None):
        raise InputError("give either SPEC (to boot a series) or --from-run RUN (to read one)")
    with Store.open(db) as store:
        if request.from_run is not None:
            result = history_from_run(store, request.from_run, request.metric, request.alpha)
        else:
            assert request.spec is not None
            kernels = resolve_versions(request.spec, request.versions)
            base = VariantSpec(
                name="base",
                kernel=kernels[0],
                append=request.append,
                smp=request.smp,
                mem_mb=request.mem_mb,
                icount_shift=request.icount_shift,
            )
            template = plan_with_settings((base,), request.settings or GivenSettings())
            plan = history_plan(kernels, base, template)
            result = run_history(plan, store, request.metric, request.alpha, reporter)
        explained = _explain(store, result, request.by, request.alpha) if request.by else None
    return HistoryOutcome(result, explained)


def _explain(
    store: Store, result: HistoryResult, by: Sequence[str], alpha: float
) -> tuple[tuple[int, DiffResult], ...]:
    """Return, per change point of ``result``, the diff of the positions around it (``--by`` kinds)."""
    from bootscope.usecases.diff import check_kinds, explain_steps

    steps = [change.index for change in result.change_points.change_points]
    if result.run is None or not steps:
        return ()
    kinds = check_kinds(by)
    return tuple(
        explain_steps(store, result.run, steps, metric=result.metric, kinds=kinds, alpha=alpha, fdr=alpha)
    )

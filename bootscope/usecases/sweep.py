"""A sweep: a grid of kernel options, QEMU settings and kernels, run as one interleaved experiment.

The grid's cells become the variants of an ordinary ``Plan`` (so ``bootscope run``'s executor boots
them, interleaved and seeded, and the store keeps every boot); the analysis compares every cell
with the baseline cell (the first value of every parameter) with Holm's correction, names the best
cell, and tabulates main effects.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bootscope import defaults, metrics
from bootscope.errors import InputError, StatsError
from bootscope.lab.executors import open_executor
from bootscope.lab.executors.local import Executor
from bootscope.lab.plans.boot import (
    RUN_KEYS,
    Plan,
    VariantSpec,
    apply_option,
    plan_with_settings,
    read_toml,
    validate_plan,
)
from bootscope.lab.plans.settings import GivenSettings, settings_from_mapping
from bootscope.lab.progress import Reporter
from bootscope.metrics import DEFAULT_METRIC
from bootscope.model import Comparison
from bootscope.stats.compare import FASTER, Options, compare_many
from bootscope.stats.effects import MainEffects, main_effects
from bootscope.store import Store
from bootscope.usecases.run import start_experiment

# Parameters that are QEMU settings or the kernel itself; any other name is a kernel command-line
# option, booted as ``NAME=VALUE`` appended to the command line.
MACHINE_PARAMS = ("smp", "mem", "cpu", "kernel", "icount")
# The parameter whose levels are whole command-line fragments (``append=,initcall_debug``): an empty
# level appends nothing, which is how a flag without a value is switched on and off.
APPEND_PARAM = "append"
_PARAM_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")
# The plan-file key naming the metric to compare (every other key is a run setting or a boot option).
METRIC_KEY = "metric"


@dataclass(frozen=True, slots=True)
class Parameter:
    """One grid axis: its name and its levels in the order given (the first is the baseline's)."""

    name: str
    levels: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Cell:
    """One grid cell: the variant name it boots under and its level of every parameter."""

    name: str
    params: tuple[tuple[str, str], ...]

    def as_dict(self) -> dict[str, str]:
        """Return the cell's parameters as a name -> level dict (grid order)."""
        return dict(self.params)


@dataclass(frozen=True, slots=True)
class CellResult:
    """A cell's samples (metric's unit) and its comparison with the baseline (None for the baseline)."""

    cell: Cell
    samples: tuple[float, ...]
    comparison: Comparison | None


@dataclass(frozen=True, slots=True)
class SweepResult:
    """The analysed sweep: every cell (baseline first), the best cell, and the main effects."""

    run: int | None
    metric: str
    unit: str
    baseline: CellResult
    cells: tuple[CellResult, ...]
    best: Cell | None
    effects: MainEffects
    alpha: float


@dataclass(frozen=True, slots=True)
class SweepSetup:
    """A sweep ready to run: its parameters, its cells (baseline first), the plan with one variant
    per cell, and the metric the cells are compared on."""

    params: tuple[Parameter, ...]
    cells: tuple[Cell, ...]
    plan: Plan
    metric: str


def parse_param(text: str) -> Parameter:
    """Return the Parameter that ``NAME=V1,V2,...`` describes.

    Raises InputError for a missing ``=``, a bad name, no levels, or a level given twice.
    """
    name, eq, rest = text.partition("=")
    name = name.strip()
    if not eq or not _PARAM_NAME_RE.match(name):
        raise InputError(f"bad --param {text!r}: expected NAME=V1,V2,... (e.g. smp=1,2,4)")
    levels = tuple(level.strip() for level in rest.split(","))
    if name != APPEND_PARAM and any(not level for level in levels):
        raise InputError(f"bad --param {text!r}: an empty value (only append= may have one)")
    if len(set(levels)) != len(levels):
        raise InputError(f"bad --param {text!r}: a value is given twice")
    return Parameter(name=name, levels=levels)


def read_grid_file(path: Path) -> tuple[list[Parameter], dict[str, Any]]:
    """Read a sweep plan: ``[grid]`` maps parameter names to lists of levels; other top-level keys
    (kernel, samples, seed, jobs, metric, ...) are returned as settings.

    Raises InputError for an unreadable file, no ``[grid]`` table, or a level list that is empty.
    """
    data = read_toml(path)
    grid = data.get("grid")
    if not isinstance(grid, dict) or not grid:
        raise InputError(f"plan {path}: a sweep needs a [grid] table, e.g. smp = [1, 2, 4]")
    params: list[Parameter] = []
    for name, values in grid.items():
        if not isinstance(values, list) or not values:
            raise InputError(f"plan {path}: grid.{name} must be a non-empty list of values")
        params.append(parse_param(f"{name}={','.join(str(v) for v in values)}"))
    settings = {key: value for key, value in data.items() if key != "grid"}
    return params, settings


def expand_grid(params: Sequence[Parameter]) -> list[Cell]:
    """Return every cell of the grid, baseline (all first levels) first, last parameter fastest.

    Raises InputError for no parameters or a parameter named twice.
    """
    if not params:
        raise InputError("a sweep needs at least one --param NAME=V1,V2,...")
    names = [p.name for p in params]
    if len(set(names)) != len(names):
        raise InputError(f"a parameter is named twice: {', '.join(names)}")
    cells = []
    for combination in itertools.product(*(p.levels for p in params)):
        pairs = tuple(zip(names, combination, strict=True))
        cells.append(Cell(name=_cell_name(pairs), params=pairs))
    return cells


def _cell_name(pairs: Sequence[tuple[str, str]]) -> str:
    # Variant names allow letters, digits and _.+- (plan.py); keep them readable and unique.
    parts = []
    for name, level in pairs:
        short = re.sub(r"[^A-Za-z0-9_.+-]+", "-", level).strip("-") or "none"
        parts.append(f"{name.split('.')[-1]}-{short}")
    joined = "+".join(parts)
    if len(joined) > 64:
        # A stable digest (not hash(): that changes per process) keeps names equal across resumes.
        digest = hashlib.sha1(repr(tuple(pairs)).encode()).hexdigest()[:8]
        joined = f"{joined[:55]}-{digest}"
    return joined


def cell_variant(cell: Cell, base: VariantSpec) -> VariantSpec:
    """Return ``base`` with the cell's levels applied (machine settings, kernel, or ``NAME=VALUE``
    appended to the command line), named after the cell. Raises InputError for a bad level."""
    spec = replace(base, name=cell.name)
    for name, level in cell.params:
        if name in MACHINE_PARAMS:
            spec = apply_option(spec, name, level)
        elif name == APPEND_PARAM:
            spec = apply_option(spec, "append", level) if level else spec
        else:
            spec = apply_option(spec, "append", f"{name}={level}")
    return spec


def sweep_plan(cells: Sequence[Cell], base: VariantSpec, template: Plan) -> Plan:
    """Return ``template`` with one variant per cell (baseline first); raises InputError if invalid."""
    variants = tuple(cell_variant(cell, base) for cell in cells)
    names = [v.name for v in variants]
    if len(set(names)) != len(names):
        raise InputError("two grid cells map to the same variant name; use shorter distinct values")
    return validate_plan(replace(template, variants=variants))


def build_sweep(
    *,
    kernel: str | None,
    param_texts: Sequence[str],
    plan_file: Path | None,
    settings: GivenSettings,
    metric: str | None = None,
) -> SweepSetup:
    """Return the sweep the command line describes: the plan file's ``[grid]`` and boot options
    first, then ``kernel`` and the ``--param`` texts. The run ``settings`` given win over the plan
    file's, and a cell gets ``defaults.SAMPLES_PER_CELL`` boots unless told. The metric
    is ``metric``, else the plan file's, else the default metric. Raises InputError naming the bad
    part (no kernel, a bad parameter, level, option or setting)."""
    params = [parse_param(text) for text in param_texts]
    base = VariantSpec(name="base", kernel="")
    merged: dict[str, Any] = {"samples_per_variant": defaults.SAMPLES_PER_CELL}
    file_metric: str | None = None
    if plan_file is not None:
        file_params, file_settings = read_grid_file(plan_file)
        params = file_params + params
        for key, value in file_settings.items():
            name = key.replace("_", "-")
            if name == METRIC_KEY:
                file_metric = str(value)
            elif name in RUN_KEYS:
                merged[RUN_KEYS[name]] = value
            else:
                base = apply_option(base, key, value)
    if kernel:
        base = apply_option(base, "kernel", kernel)
    if not base.kernel and not any(p.name == "kernel" for p in params):
        raise InputError("name a KERNEL (or kernel = ... in the plan, or --param kernel=A,B)")
    if not base.kernel:
        base = apply_option(base, "kernel", "unset")  # every cell sets its own kernel
    merged.update(settings.given())
    cells = expand_grid(params)
    plan = sweep_plan(cells, base, plan_with_settings((base,), settings_from_mapping(merged)))
    return SweepSetup(tuple(params), tuple(cells), plan, metric or file_metric or DEFAULT_METRIC)


def analyse_sweep(
    cells: Sequence[Cell],
    samples_by_variant: Mapping[str, Sequence[float]],
    metric: str,
    unit: str = "s",
    options: Options | None = None,
    run: int | None = None,
) -> SweepResult:
    """Return every cell compared with the baseline cell (``cells[0]``), Holm-corrected, the best
    cell (the fastest cell whose verdict is "faster", else the baseline when none is), and the main
    effects. Samples are in the metric's unit. Raises StatsError when a cell has fewer than 2 samples.
    """
    options = options or Options()
    for cell in cells:
        if len(samples_by_variant.get(cell.name, ())) < 2:
            raise StatsError(
                f"cell {cell.name} has {len(samples_by_variant.get(cell.name, ()))} usable boot(s) of "
                f"{metric}; a comparison needs at least 2"
            )
    baseline_cell, others = cells[0], list(cells[1:])
    baseline_samples = tuple(samples_by_variant[baseline_cell.name])
    comparisons: list[Comparison] = []
    if others:
        comparisons = compare_many(
            baseline_samples,
            {cell.name: samples_by_variant[cell.name] for cell in others},
            metric,
            unit,
            options,
            baseline_name=baseline_cell.name,
        )
    results = [
        CellResult(cell, tuple(samples_by_variant[cell.name]), comparison)
        for cell, comparison in zip(others, comparisons, strict=True)
    ]
    faster = [r for r in results if r.comparison is not None and r.comparison.verdict == FASTER]
    best = min(faster, key=lambda r: r.comparison.b.median if r.comparison else 0.0).cell if faster else None
    effects = main_effects(
        [(cell.as_dict(), samples_by_variant[cell.name]) for cell in cells],
        parameter_order=[name for name, _ in baseline_cell.params],
    )
    return SweepResult(
        run=run,
        metric=metric,
        unit=unit,
        baseline=CellResult(baseline_cell, baseline_samples, None),
        cells=tuple(results),
        best=best if best is not None else baseline_cell,
        effects=effects,
        alpha=options.alpha,
    )


def run_sweep(
    cells: Sequence[Cell],
    plan: Plan,
    store: Store,
    metric: str,
    options: Options | None = None,
    reporter: Reporter | None = None,
    executor: Executor | None = None,
) -> SweepResult:
    """Run ``plan`` (built by :func:`sweep_plan` from ``cells``) with ``executor`` (default: this
    host's threads), every boot stored in ``store``, and return its analysis. Raises
    BootError/InputError/StoreError as ``start_experiment`` does, StatsError when a cell has fewer
    than 2 ok boots."""
    result = start_experiment(plan, store, reporter, executor=executor)
    experiment_id = result.experiment.id
    return analyse_sweep(cells, store.samples(experiment_id, metric), metric, "s", options, experiment_id)


def sweep_command(
    *,
    kernel: str | None,
    param_texts: Sequence[str],
    plan_file: Path | None,
    settings: GivenSettings,
    metric: str | None,
    db: str,
    executor_spec: str | None = None,
    alpha: float = defaults.ALPHA,
    reporter: Reporter | None = None,
) -> tuple[SweepSetup, SweepResult]:
    """Build the sweep (:func:`build_sweep`), check its metric, run it in store ``db`` on the
    executor ``executor_spec`` names, and return the setup with the analysis (cells compared at
    ``alpha``, Holm-corrected). Raises InputError for a bad sweep or an unknown metric, and as
    :func:`run_sweep` does."""
    setup = build_sweep(
        kernel=kernel, param_texts=param_texts, plan_file=plan_file, settings=settings, metric=metric
    )
    metrics.definition(setup.metric)
    with Store.open(db) as store, open_executor(executor_spec, settings.jobs) as executor:
        result = run_sweep(
            setup.cells, setup.plan, store, setup.metric, Options(alpha=alpha), reporter, executor
        )
    return setup, result

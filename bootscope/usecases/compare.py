"""``bootscope compare``: two sets of boot times, from wherever they are, compared.

The inputs are exactly one of: a stored run (its variants against a baseline), two lists of numbers,
two files of numbers, or two directories of boot logs. This module picks the one given, reads its
numbers (:mod:`bootscope.usecases.samples`), checks the options and compares
(:mod:`bootscope.stats.compare`); the result carries the comparisons, the metric's definition, the
warnings for the user and the exit code that ``--fail-on slower`` asks for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bootscope import metrics
from bootscope.amounts import UNIT_FACTORS, parse_amount
from bootscope.defaults import ALPHA, BOOTSTRAP_SEED
from bootscope.errors import InputError
from bootscope.model import Comparison, LikeForLike
from bootscope.sources.paths import side_label
from bootscope.usecases.samples import parse_numbers, read_numbers, values_from_logs, values_from_run

if TYPE_CHECKING:  # scipy: only when compared
    from bootscope.stats.compare import Options

EXIT_OK, EXIT_SLOWER = 0, 1
FAIL_ON = ("slower",)
USER_NUMBERS = "numbers given by the user (definition not stated)"


@dataclass(frozen=True, slots=True)
class CompareInputs:
    """What compare reads: a stored run (``run``, an id or ``latest``, in ``db``, its ``baseline``
    variant), or side a and b as typed numbers (``a``, ``b``), files of numbers (``a_file``,
    ``b_file``) or logs (``a_logs``, ``b_logs``: files, directories or globs, as
    :func:`bootscope.sources.paths.log_files` reads them). ``metric`` None: the default."""

    run: str | None = None
    a: str | None = None
    b: str | None = None
    a_file: Path | None = None
    b_file: Path | None = None
    a_logs: Sequence[Path] | None = None
    b_logs: Sequence[Path] | None = None
    baseline: str | None = None
    metric: str | None = None
    db: str = ""


@dataclass(frozen=True, slots=True)
class CompareSettings:
    """How to compare: significance level, alternative, method (``mw`` or ``sign``), the shift to
    size the sample for (``detect``: 100ms, 0.1s or 1%), the sign test's margin (an amount, None:
    the data's resolution), the bootstrap seed (None: the default), the unit of the numbers and the
    output (``s`` or ``ms``) and the verdict that fails the command (``fail_on``: None or slower)."""

    alpha: float = ALPHA
    alternative: str = "two-sided"
    method: str = "mw"
    detect: str = "1%"
    margin: str | None = None
    bootstrap_seed: int | None = None
    unit: str = "s"
    fail_on: str | None = None


@dataclass(frozen=True, slots=True)
class CompareResult:
    """The comparisons (each other side against the baseline side), the metric's definition, the
    exit code (1: a verdict ``--fail-on`` names), the one-line reason for a non-zero exit (None
    when 0) and, per comparison, the like-for-like guard of its two sides (None where the input
    states no facts: numbers typed or read from files)."""

    comparisons: tuple[Comparison, ...]
    definition: str
    exit_code: int = EXIT_OK
    failure: str | None = None
    like_for_like: tuple[LikeForLike | None, ...] = ()


def check_metric(name: str) -> None:
    """Check that compare can read ``name``: a registered metric or ``unit:NAME.service``. Raises
    InputError (one line) otherwise."""
    try:
        if metrics.unit_metric(name) is not None:
            return
    except ValueError as error:
        raise InputError(str(error)) from None
    try:
        metrics.definition(name)
    except InputError as error:
        raise InputError(f"{error}, unit:NAME.service") from None


def definition_of(name: str) -> str:
    """Return what ``name`` measures: a registered metric's or a unit's definition, or a note that
    the numbers are the user's own."""
    try:
        unit = metrics.unit_metric(name)
    except ValueError:
        unit = None
    if unit is not None:
        return metrics.unit_definition(unit)
    entry = metrics.REGISTRY.get(name)
    return entry.definition if entry is not None else USER_NUMBERS


def _mode(inputs: CompareInputs) -> str:
    modes = {
        "RUN": inputs.run is not None,
        "--a/--b": inputs.a is not None or inputs.b is not None,
        "--a-file/--b-file": inputs.a_file is not None or inputs.b_file is not None,
        "--a-logs/--b-logs": inputs.a_logs is not None or inputs.b_logs is not None,
    }
    chosen = [name for name, given in modes.items() if given]
    if len(chosen) != 1:
        raise InputError("give exactly one input: RUN, --a/--b, --a-file/--b-file or --a-logs/--b-logs")
    return chosen[0]


def _options(settings: CompareSettings) -> Options:
    from bootscope.stats.compare import Options  # scipy: only when compared

    detect_abs, detect_rel = parse_amount(settings.detect, settings.unit, "--detect")
    margin = settings.margin
    margin_value = parse_amount(margin, settings.unit, "--margin")[0] if margin is not None else None
    if margin is not None and margin_value is None:
        raise InputError("--margin must be an amount such as 100ms, not a percentage")
    seed = BOOTSTRAP_SEED if settings.bootstrap_seed is None else settings.bootstrap_seed
    return Options(
        settings.alpha,
        settings.alternative,
        settings.method,
        detect_abs,
        detect_rel,
        seed,
        margin_value,
        shape=True,
    )


def _run_sides(inputs: CompareInputs, factor: float) -> tuple[str, list[float], dict[str, list[float]], str]:
    """Return (metric, baseline side, the other variants, baseline name) of a stored run (in the
    output unit)."""
    from bootscope.store import Store  # sqlalchemy: only for a stored run

    assert inputs.run is not None
    metric = inputs.metric or metrics.DEFAULT_METRIC
    check_metric(metric)
    with Store.open(inputs.db, create=False) as store:
        stored = values_from_run(store, inputs.run, metric, inputs.baseline)
    base = stored.baseline
    scaled = {name: [v * factor for v in values] for name, values in stored.samples.items()}
    baseline_values = scaled.pop(base)
    if len(baseline_values) < 2:
        raise InputError(f"baseline {base!r} has {len(baseline_values)} ok boot(s) with {metric}")
    return metric, baseline_values, scaled, base


def _log_sides(
    inputs: CompareInputs, factor: float, warn: Callable[[str], None]
) -> tuple[str, list[list[float]], tuple[str, str]]:
    if inputs.a_logs is None or inputs.b_logs is None:
        raise InputError("give both --a-logs and --b-logs")
    metric = inputs.metric or metrics.DEFAULT_METRIC
    check_metric(metric)
    if metric not in metrics.REGISTRY:
        raise InputError(f"--metric {metric}: a unit's time is compared on a stored run only")
    sides = []
    for paths in (inputs.a_logs, inputs.b_logs):
        found = values_from_logs(paths, metric)
        for line in found.warnings:
            warn(line)
        sides.append([value * factor for value in found.values])
    return metric, sides, (side_label(inputs.a_logs, "a"), side_label(inputs.b_logs, "b"))


def _number_sides(inputs: CompareInputs, mode: str) -> tuple[str, list[list[float]], tuple[str, str]]:
    metric = inputs.metric or "value"
    if mode == "--a-file/--b-file":
        if inputs.a_file is None or inputs.b_file is None:
            raise InputError("give both --a-file and --b-file")
        names = (inputs.a_file.stem or "a", inputs.b_file.stem or "b")
        return metric, [read_numbers(inputs.a_file), read_numbers(inputs.b_file)], names
    if inputs.a is None or inputs.b is None:
        raise InputError("give both --a and --b")
    return metric, [parse_numbers(inputs.a, "--a"), parse_numbers(inputs.b, "--b")], ("a", "b")


def compare(inputs: CompareInputs, settings: CompareSettings, warn: Callable[[str], None]) -> CompareResult:
    """Return the comparison of the one input given (see :class:`CompareInputs`), in
    ``settings.unit``; logs skipped and boots without the metric go to ``warn``, one line each, as
    each side is read. Raises InputError for no input or more than one, a half-given side, an
    unknown unit, metric, variant or ``fail_on``, or too few numbers; StoreError for a missing run;
    StatsError for samples that cannot be compared."""
    from bootscope.stats.compare import compare_many  # scipy: only when compared

    if settings.unit not in UNIT_FACTORS:
        raise InputError(f"unknown unit {settings.unit!r}; use s or ms")
    if settings.fail_on is not None and settings.fail_on not in FAIL_ON:
        raise InputError("--fail-on takes 'slower'")
    mode = _mode(inputs)
    factor = UNIT_FACTORS[settings.unit]
    options = _options(settings)
    if mode == "RUN":
        metric, base_values, others, base = _run_sides(inputs, factor)
    else:
        if mode == "--a-logs/--b-logs":
            metric, sides, names = _log_sides(inputs, factor, warn)
        else:
            metric, sides, names = _number_sides(inputs, mode)
        base_values, others, base = sides[0], {names[1]: sides[1]}, names[0]
    comparisons = compare_many(base_values, others, metric, settings.unit, options, base)
    guards = _guards(inputs, mode, base, [c.b.name for c in comparisons])
    return _result(comparisons, definition_of(metric), settings.fail_on, guards)


def _guards(
    inputs: CompareInputs, mode: str, base: str, others: Sequence[str]
) -> tuple[LikeForLike | None, ...]:
    """Return the like-for-like guard of each comparison: the baseline's boots against each other
    side's, from the run's records or the logs; None for numbers (they state no facts)."""
    from bootscope.analyze.like_for_like import like_for_like
    from bootscope.usecases.boot_facts import facts_of_logs, facts_of_run

    if mode == "RUN" and inputs.run is not None:
        from bootscope.store import Store  # sqlalchemy: only for a stored run

        with Store.open(inputs.db, create=False) as store:
            facts = facts_of_run(store, inputs.run)
        return tuple(like_for_like(facts.get(base, []), facts.get(name, [])) for name in others)
    if mode == "--a-logs/--b-logs" and inputs.a_logs and inputs.b_logs:
        return (like_for_like(facts_of_logs(inputs.a_logs), facts_of_logs(inputs.b_logs)),)
    return tuple(None for _ in others)


def _result(
    comparisons: Sequence[Comparison],
    definition: str,
    fail_on: str | None,
    guards: tuple[LikeForLike | None, ...] = (),
) -> CompareResult:
    """Return the result with the exit code ``fail_on`` asks for: 1 when a verdict is slower."""
    from bootscope.stats.compare import SLOWER

    named = [c.b.name for c in comparisons if c.verdict == SLOWER]
    if fail_on == "slower" and named:
        failure = f"slower: {', '.join(named)} (--fail-on slower)"
        return CompareResult(tuple(comparisons), definition, EXIT_SLOWER, failure, guards)
    return CompareResult(tuple(comparisons), definition, like_for_like=guards)

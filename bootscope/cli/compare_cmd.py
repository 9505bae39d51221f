"""`bootscope compare`: is b faster than a? Two sets of numbers, logs, or the variants of a stored run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from bootscope.amounts import UNIT_FACTORS, parse_amount
from bootscope.cli import options
from bootscope.defaults import ALPHA, BOOTSTRAP_SEED, DEFAULT_DB
from bootscope.errors import InputError
from bootscope.metrics import DEFAULT_METRIC
from bootscope.model import Comparison
from bootscope.report import compare_out, mail
from bootscope.report.console import output_console
from bootscope.usecases.samples import parse_numbers, read_numbers, values_from_logs, values_from_run

FORMATS = ("table", "json", "markdown", "csv", "mail")


def _definitions() -> dict[str, str]:
    from bootscope.metrics import DEFINITIONS

    return DEFINITIONS


def _check_metric(metric: str) -> None:
    from bootscope.metrics import unit_metric

    known = _definitions()
    try:
        if metric not in known and unit_metric(metric) is None:
            known_list = ", ".join(known)
            raise InputError(f"unknown metric {metric!r}; known metrics: {known_list}, unit:NAME.service")
    except ValueError as error:
        raise InputError(str(error)) from None


def _definition(metric: str) -> str:
    from bootscope.metrics import unit_definition, unit_metric

    try:
        unit = unit_metric(metric)
    except ValueError:
        unit = None
    if unit is not None:
        return unit_definition(unit)
    return _definitions().get(metric, "numbers given by the user (definition not stated)")


def compare(
    run: Annotated[str | None, typer.Argument(help="A stored run's id or 'latest'.")] = None,
    a: Annotated[str | None, typer.Option("--a", help="Side a as numbers: 8.7,8.4,...")] = None,
    b: Annotated[str | None, typer.Option("--b", help="Side b as numbers.")] = None,
    a_file: Annotated[
        Path | None, typer.Option("--a-file", help="Side a: one number per line, # comments.")
    ] = None,
    b_file: Annotated[Path | None, typer.Option("--b-file", help="Side b: one number per line.")] = None,
    a_logs: Annotated[Path | None, typer.Option("--a-logs", help="Side a: a directory of boot logs.")] = None,
    b_logs: Annotated[Path | None, typer.Option("--b-logs", help="Side b: a directory of boot logs.")] = None,
    baseline: Annotated[str | None, typer.Option(help="RUN's variant to compare the others with.")] = None,
    metric: Annotated[
        str | None, typer.Option(help=f"Metric to compare, or unit:NAME.service [default: {DEFAULT_METRIC}].")
    ] = None,
    db: options.Db = DEFAULT_DB,
    alpha: Annotated[float, typer.Option(help="Significance level.")] = ALPHA,
    alternative: Annotated[
        str, typer.Option(help="two-sided, less (b faster) or greater (b slower).")
    ] = "two-sided",
    method: Annotated[
        str, typer.Option(help="mw (Mann-Whitney + Hodges-Lehmann) or sign (seed 000).")
    ] = "mw",
    margin: Annotated[
        str | None, typer.Option(help="Sign test margin, e.g. 100ms [default: the data's resolution].")
    ] = None,
    detect: Annotated[str, typer.Option(help="Shift to size the sample for: 100ms, 0.1s or 1%.")] = "1%",
    bootstrap_seed: Annotated[
        int | None,
        typer.Option(
            "--bootstrap-seed",
            help=f"Seed of the bootstrap and the power simulation (default {BOOTSTRAP_SEED}).",
        ),
    ] = None,
    old_seed: Annotated[
        int | None, typer.Option("--seed", hidden=True, help="Deprecated: --bootstrap-seed.")
    ] = None,
    fmt: Annotated[str, options.format_option(FORMATS, "table")] = "table",
    unit: Annotated[str, typer.Option(help="s or ms: unit of --a/--b/files and of the output.")] = "s",
    fail_on: Annotated[str | None, typer.Option(help="Exit 1 when a verdict is 'slower'.")] = None,
) -> int:
    """Compare two sets of boot times: shift with interval, tests, verdict and boots needed."""
    from bootscope.stats.compare import SLOWER, Options, compare_many  # scipy: only when run

    options.check_format(fmt, FORMATS)
    if old_seed is not None:
        # --seed is the seed of the measurement order everywhere else; here it seeded the bootstrap.
        options.deprecated(f"--seed {old_seed}", f"--bootstrap-seed {old_seed}")
        if bootstrap_seed not in (None, old_seed):
            raise InputError(f"--seed {old_seed} and --bootstrap-seed {bootstrap_seed} disagree")
        bootstrap_seed = old_seed
    if unit not in UNIT_FACTORS:
        raise InputError(f"unknown unit {unit!r}; use s or ms")
    if fail_on not in (None, "slower"):
        raise InputError("--fail-on takes 'slower'")
    modes = {
        "RUN": run is not None,
        "--a/--b": a is not None or b is not None,
        "--a-file/--b-file": a_file is not None or b_file is not None,
        "--a-logs/--b-logs": a_logs is not None or b_logs is not None,
    }
    chosen = [name for name, given in modes.items() if given]
    if len(chosen) != 1:
        raise InputError("give exactly one input: RUN, --a/--b, --a-file/--b-file or --a-logs/--b-logs")
    factor = UNIT_FACTORS[unit]
    detect_abs, detect_rel = parse_amount(detect, unit, "--detect")
    margin_value = parse_amount(margin, unit, "--margin")[0] if margin is not None else None
    if margin is not None and margin_value is None:
        raise InputError("--margin must be an amount such as 100ms, not a percentage")
    settings = Options(
        alpha,
        alternative,
        method,
        detect_abs,
        detect_rel,
        BOOTSTRAP_SEED if bootstrap_seed is None else bootstrap_seed,
        margin_value,
    )

    if run is not None:
        metric_name = metric or DEFAULT_METRIC
        _check_metric(metric_name)
        from bootscope.store import Store  # sqlalchemy: only for a stored run

        with Store.open(db) as store:
            stored = values_from_run(store, run, metric_name, baseline)
        base = stored.baseline
        scaled = {name: [v * factor for v in values] for name, values in stored.samples.items()}
        baseline_values = scaled.pop(base)
        if len(baseline_values) < 2:
            raise InputError(f"baseline {base!r} has {len(baseline_values)} ok boot(s) with {metric_name}")
        comparisons = compare_many(baseline_values, scaled, metric_name, unit, settings, base)
    else:
        if chosen[0] == "--a-logs/--b-logs":
            if a_logs is None or b_logs is None:
                raise InputError("give both --a-logs and --b-logs")
            metric_name = metric or DEFAULT_METRIC
            _check_metric(metric_name)
            if metric_name not in _definitions():
                raise InputError(f"--metric {metric_name}: a unit's time is compared on a stored run only")
            side_a, side_b = (_log_values(path, metric_name, factor) for path in (a_logs, b_logs))
            names = (a_logs.name or "a", b_logs.name or "b")
        elif chosen[0] == "--a-file/--b-file":
            if a_file is None or b_file is None:
                raise InputError("give both --a-file and --b-file")
            side_a, side_b = read_numbers(a_file), read_numbers(b_file)
            metric_name, names = metric or "value", (a_file.stem or "a", b_file.stem or "b")
        else:
            if a is None or b is None:
                raise InputError("give both --a and --b")
            side_a, side_b = parse_numbers(a, "--a"), parse_numbers(b, "--b")
            metric_name, names = metric or "value", ("a", "b")
        comparisons = compare_many(side_a, {names[1]: side_b}, metric_name, unit, settings, names[0])
    definition = _definition(metric_name)
    _emit(comparisons, definition, fmt)
    slower = [c.b.name for c in comparisons if c.verdict == SLOWER]
    if fail_on == "slower" and slower:
        print(f"bootscope: slower: {', '.join(slower)} (--fail-on slower)", file=sys.stderr)
        return 1
    return 0


def _log_values(directory: Path, metric: str, factor: float) -> list[float]:
    found = values_from_logs(directory, metric)
    for warning in found.warnings:
        print(f"bootscope: warning: {warning}", file=sys.stderr)
    return [value * factor for value in found.values]


def _emit(comparisons: list[Comparison], definition: str, fmt: str) -> None:
    if fmt == "json":
        sys.stdout.write(compare_out.to_json(comparisons, definition) + "\n")
    elif fmt == "csv":
        sys.stdout.write(compare_out.to_csv(comparisons))
    elif fmt == "markdown":
        sys.stdout.write(compare_out.to_markdown(comparisons, definition))
    elif fmt == "mail":
        sys.stdout.write(mail.to_mail(comparisons, definition))
    else:
        output_console().print(compare_out.table(comparisons, definition))

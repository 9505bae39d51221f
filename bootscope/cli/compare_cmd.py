"""`bootscope compare`: is b faster than a? Two sets of numbers, logs, or the variants of a stored run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from bootscope.cli import options
from bootscope.defaults import ALPHA, BOOTSTRAP_SEED, DEFAULT_DB
from bootscope.errors import InputError
from bootscope.metrics import DEFAULT_METRIC
from bootscope.report import notes
from bootscope.report.compare_formats import FORMATS, write_comparisons
from bootscope.usecases.compare import CompareInputs, CompareSettings
from bootscope.usecases.compare import compare as compare_inputs


def compare(
    run: Annotated[str | None, typer.Argument(help="A stored run's id or 'latest'.")] = None,
    a: Annotated[str | None, typer.Option("--a", help="Side a as numbers: 8.7,8.4,...")] = None,
    b: Annotated[str | None, typer.Option("--b", help="Side b as numbers.")] = None,
    a_file: Annotated[
        Path | None, typer.Option("--a-file", help="Side a: one number per line, # comments.")
    ] = None,
    b_file: Annotated[Path | None, typer.Option("--b-file", help="Side b: one number per line.")] = None,
    a_logs: options.ALogs = None,
    b_logs: options.BLogs = None,
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
        str,
        typer.Option(
            help="mw (Mann-Whitney + Hodges-Lehmann) or sign (the sign test of an LKML boot-time review)."
        ),
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
    options.check_format(fmt, FORMATS)
    if old_seed is not None:
        # --seed is the seed of the measurement order everywhere else; here it seeded the bootstrap.
        options.deprecated(f"--seed {old_seed}", f"--bootstrap-seed {old_seed}")
        if bootstrap_seed not in (None, old_seed):
            raise InputError(f"--seed {old_seed} and --bootstrap-seed {bootstrap_seed} disagree")
        bootstrap_seed = old_seed
    inputs = CompareInputs(run, a, b, a_file, b_file, a_logs, b_logs, baseline, metric, db)
    settings = CompareSettings(alpha, alternative, method, detect, margin, bootstrap_seed, unit, fail_on)
    result = compare_inputs(inputs, settings, warn=notes.warning)
    write_comparisons(result.comparisons, result.definition, fmt, result.like_for_like)
    if result.failure is not None:
        notes.say(result.failure)
    return result.exit_code

"""`bootscope sweep`: boot a grid of options, machines and kernels as one interleaved experiment and
compare every cell with the baseline cell (issue 7, seed 001).

Thin: the sweep is :func:`bootscope.usecases.sweep.sweep_command`, its output
:mod:`bootscope.report.sweep_out`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from bootscope import defaults
from bootscope.cli import options
from bootscope.metrics import DEFAULT_METRIC


def sweep(
    kernel: Annotated[
        str | None, typer.Argument(help="Kernel: a bzImage path or debian:<flavour|package>.")
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option("--param", help="NAME=V1,V2,...: a kernel option, smp, mem, cpu, kernel or append."),
    ] = None,
    n: Annotated[
        int | None,
        typer.Option("-n", help=f"Boots per cell (default: the plan's, else {defaults.SAMPLES_PER_CELL})."),
    ] = None,
    plan_file: Annotated[Path | None, typer.Option("--plan", help="TOML with a \\[grid] table.")] = None,
    db: options.Db = defaults.DEFAULT_DB,
    fmt: Annotated[str, options.format_option(options.TABLE_JSON, "table")] = "table",
    metric: Annotated[
        str | None, typer.Option(help=f"Metric to compare (default: the plan's, else {DEFAULT_METRIC}).")
    ] = None,
    jobs: options.Jobs = None,
    warmup: Annotated[
        int | None,
        typer.Option(help=f"Warm-up boots per cell, not measured (default {defaults.WARMUP_BOOTS})."),
    ] = None,
    seed: options.Seed = None,
    executor_spec: options.ExecutorOpt = None,
    alpha: Annotated[
        float, typer.Option(help="Significance level (Holm-corrected over the cells).")
    ] = defaults.ALPHA,
    accel: options.Accel = None,
    timeout: options.Timeout = None,
    quiet_host: options.QuietHost = False,
    until: options.Until = None,
    precision: options.Precision = None,
    max_n: options.MaxN = None,
) -> None:
    """Boot a grid of options, machines and kernels; compare every cell with the baseline cell."""
    from bootscope.lab.progress import RichReporter, SilentReporter
    from bootscope.report.sweep_out import print_sweep, sweep_json  # scipy: only when run
    from bootscope.usecases.sweep import sweep_command

    options.check_format(fmt, options.TABLE_JSON)
    settings = options.run_settings(
        samples=n, warmup=warmup, seed=seed, timeout=timeout, accel=accel, jobs=jobs, quiet_host=quiet_host,
        until=until, precision=precision, max_n=max_n,
    )  # fmt: skip
    setup, result = sweep_command(
        kernel=kernel, param_texts=param or [], plan_file=plan_file, settings=settings, metric=metric, db=db,
        executor_spec=executor_spec, alpha=alpha,
        reporter=SilentReporter() if fmt == "json" else RichReporter(),
    )  # fmt: skip
    data = sweep_json(result)
    if fmt == "json":
        print(json.dumps(data, indent=2))
        return
    print_sweep(data, [p.name for p in setup.params])

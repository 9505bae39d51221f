"""`bootscope history`: a metric across kernel versions (booted now, or a stored run), and the steps
(change points) where it moved (issue 7, seed 001).

Thin: the history is :func:`bootscope.usecases.history.history_command`, its output
:mod:`bootscope.report.history_out`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from bootscope import defaults
from bootscope.cli import options
from bootscope.metrics import DEFAULT_METRIC


def history(
    spec: Annotated[str | None, typer.Argument(help="debian:<flavour> or a first kernel.")] = None,
    versions: Annotated[
        str, typer.Option(help="'all' (every offered debian:<flavour> kernel) or a list: 47,52 or specs.")
    ] = "all",
    n: Annotated[int, typer.Option("-n", help="Boots per version.")] = 12,
    from_run: Annotated[
        str | None, typer.Option("--from-run", help="Read a stored run (its variants in order) instead.")
    ] = None,
    db: options.Db = defaults.DEFAULT_DB,
    metric: Annotated[str, typer.Option(help="Metric of the series.")] = DEFAULT_METRIC,
    plot: Annotated[Path | None, typer.Option(help="Write a .png or .svg of the series.")] = None,
    fmt: Annotated[str, options.format_option(options.TABLE_JSON, "table")] = "table",
    append: Annotated[str, typer.Option(help="Extra kernel command line for every version.")] = "",
    smp: Annotated[int, typer.Option(help="vCPUs.")] = defaults.DEFAULT_SMP,
    mem: Annotated[int, typer.Option(help="Guest memory in MiB.")] = defaults.DEFAULT_MEM_MB,
    icount: Annotated[
        int | None,
        typer.Option(help="TCG -icount shift: guest time counts instructions, immune to host load."),
    ] = None,
    jobs: options.Jobs = None,
    warmup: Annotated[int, typer.Option(help="Warm-up boots per version.")] = defaults.WARMUP_BOOTS,
    seed: options.Seed = None,
    alpha: Annotated[
        float, typer.Option(help="Significance level of the change-point tests.")
    ] = defaults.ALPHA,
    accel: options.Accel = None,
    timeout: options.Timeout = None,
    quiet_host: options.QuietHost = False,
    by: Annotated[
        list[str] | None,
        typer.Option(
            "--by", help="At each change point, which components moved: initcall, phase, ... (repeat)."
        ),
    ] = None,
) -> None:
    """The metric across kernel versions, and the steps (change points) where it moved."""
    from bootscope.lab.progress import RichReporter, SilentReporter
    from bootscope.report.history_out import history_document, print_history, write_history_plot
    from bootscope.usecases.history import HistoryRequest, history_command

    options.check_format(fmt, options.TABLE_JSON)
    # Settings are read only for a series booted now; --from-run reads what was stored.
    settings = None if spec is None else options.run_settings(
        samples=n, warmup=warmup, seed=seed, timeout=timeout, accel=accel, jobs=jobs,
        quiet_host=quiet_host, until=None, precision=None, max_n=None,
    )  # fmt: skip
    request = HistoryRequest(
        metric=metric, alpha=alpha, spec=spec, versions=versions, from_run=from_run, settings=settings,
        append=append, smp=smp, mem_mb=mem, icount_shift=icount, by=tuple(by or ()),
    )  # fmt: skip
    reporter = SilentReporter() if fmt == "json" else RichReporter()
    outcome = history_command(request, db, reporter)
    if plot is not None:
        write_history_plot(outcome.result, plot)
    if fmt == "json":
        print(json.dumps(history_document(outcome), indent=2))
        return
    print_history(outcome, alpha)

"""``bootscope latency run TARGET`` and ``bootscope latency show ID``: measure tails, compare runs."""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from bootscope import defaults
from bootscope.cli import options

RUN_FORMATS = ("table", "json", "mail")
TargetArg = Annotated[
    str | None,
    typer.Argument(
        help="local (this machine), ssh://USER@HOST[:PORT] (a machine over SSH), labgrid:ENV.yaml[:TARGET]"
        " (a board's shell, booted from power-on first), or a kernel for a QEMU guest: debian:rt,"
        " debian:amd64, a path."
    ),
]
FormatOpt = Annotated[str, typer.Option("--format", help=f"Output format: {', '.join(RUN_FORMATS)}.")]
ThresholdOpt = Annotated[
    str | None,
    typer.Option("--threshold", help="Exceedance threshold (100us; default: the baseline's pooled p99.99)."),
]


def run(
    target: TargetArg = None,
    tool: Annotated[str, typer.Option("--tool", help="cyclictest, oslat or timerlat (rtla).")] = "cyclictest",
    duration: Annotated[str, typer.Option("--duration", help="Length of one run (60s).")] = "60s",
    load: Annotated[
        str, typer.Option("--load", help="Background load: hackbench, stress-ng or none.")
    ] = "none",
    samples: Annotated[int, typer.Option("-n", "--samples", help="Runs per variant.")] = 5,
    variant: Annotated[
        list[str] | None,
        typer.Option(
            "--variant",
            help="NAME:OPTION=VALUE,... with OPTION kernel, append, smp, mem, tool, duration, interval,"
            " priority, histogram, threads, affinity, mainaffinity, load (repeat for each variant).",
        ),
    ] = None,
    interval: Annotated[
        int, typer.Option("--interval", help="Wake-up interval in us (cyclictest -i).")
    ] = 200,
    priority: Annotated[int, typer.Option("--priority", help="SCHED_FIFO priority (cyclictest -p).")] = 95,
    histogram: Annotated[
        int, typer.Option("--histogram", help="Histogram buckets in us (cyclictest -h).")
    ] = 400,
    smp: Annotated[int, typer.Option("--smp", help="Guest CPUs (QEMU targets).")] = 2,
    allow_unequal: Annotated[
        bool, typer.Option("--allow-unequal", help="Measure variants whose tool settings or load differ.")
    ] = False,
    warmup: Annotated[int, typer.Option("--warmup", help="Warm-up runs per variant (not compared).")] = 0,
    seed: options.Seed = None,
    accel: options.Accel = None,
    resume: options.Resume = None,
    executor_spec: options.ExecutorOpt = None,
    db: options.Db = defaults.DEFAULT_DB,
    fmt: FormatOpt = "table",
    threshold: ThresholdOpt = None,
    identity: Annotated[
        Path | None,
        typer.Option("--identity", help="ssh:// targets: the private key (default: ssh-agent, ~/.ssh)."),
    ] = None,
    known_hosts: Annotated[
        Path | None,
        typer.Option("--known-hosts", help="ssh:// targets: known_hosts file (default: ~/.ssh/known_hosts)."),
    ] = None,
) -> None:
    """Run a latency tool many times per variant, interleaved, store every run, compare the tails.

    With ``--executor dask://HOST:PORT`` each run is measured on a `bootscope worker`: ``local`` is
    then the worker's machine (each run records which), a QEMU target boots on the worker. An
    ``ssh://`` TARGET runs the tool on that machine (``--known-hosts``, ``--identity``)."""
    from bootscope.cli.signals import stop_on_signals
    from bootscope.lab.progress import RichReporter, SilentReporter
    from bootscope.report.console import error_console
    from bootscope.usecases.latency_run import LatencyRequest, run_latency

    fmt = options.check_format(fmt, RUN_FORMATS)
    request = LatencyRequest(
        target=target, tool=tool, duration=duration, load=load, interval_us=interval, priority=priority,
        histogram_us=histogram, variants=tuple(variant or ()), samples=samples, warmup=warmup, seed=seed,
        accel=accel, allow_unequal=allow_unequal, smp=smp, identity=identity, known_hosts=known_hosts,
    )  # fmt: skip
    cancel = threading.Event()
    reporter = SilentReporter() if fmt != "table" else RichReporter(error_console())
    with stop_on_signals(cancel):
        result = run_latency(request, resume, db, executor_spec, reporter, cancel)
    _print(db, result.experiment.id, fmt, threshold=threshold, notes=result.notes)


def show(
    experiment: Annotated[str, typer.Argument(help="Experiment id of a latency run.")],
    db: options.Db = defaults.DEFAULT_DB,
    fmt: FormatOpt = "table",
    threshold: ThresholdOpt = None,
    threads: Annotated[
        bool, typer.Option("--threads", help="Also show every run's per-thread table (as latency analyze).")
    ] = False,
    gev: Annotated[
        bool, typer.Option("--gev", help="Fit a GEV to the run maxima (10+ runs): return levels; slow.")
    ] = False,
    html: Annotated[
        str | None, typer.Option("--html", help="Also write an HTML report with histogram overlays here.")
    ] = None,
    plot: Annotated[
        str | None, typer.Option("--plot", help="Also write a 1920x1080 PNG of the overlays here (slides).")
    ] = None,
) -> None:
    """Show a stored latency run: per-variant tails, comparisons, guard-rail warnings."""
    fmt = options.check_format(fmt, RUN_FORMATS)
    _print(db, experiment, fmt, html, threshold, threads=threads, gev=gev, plot=plot)


def _print(
    db: str,
    experiment_id: int | str,
    fmt: str,
    html: str | None = None,
    threshold: str | None = None,
    notes: Sequence[str] = (),
    threads: bool = False,
    gev: bool = False,
    plot: str | None = None,
) -> None:
    from bootscope.report.latency_runs_out import latency_runs_json, latency_runs_mail, latency_runs_text
    from bootscope.report.screen import stdout_width_cells
    from bootscope.usecases.latency import stored_latency_run

    result = stored_latency_run(db, experiment_id, threshold, gev)
    if html:
        from bootscope.report.latency_html import write_latency_html

        write_latency_html(result, Path(html))
    if plot:
        from bootscope.report.latency_html import write_latency_png

        write_latency_png(result, Path(plot))
    if fmt == "json":
        print(latency_runs_json(result, notes))
        return
    if threads and fmt == "table":
        from bootscope.report.latency_out import latency_table

        rows = [row for v in result.variants for run in v.runs for row in run.rows]
        print(latency_table(rows, stdout_width_cells(sys.stdout)))
        print()
    width_cells = stdout_width_cells(sys.stdout)
    print(latency_runs_mail(result) if fmt == "mail" else latency_runs_text(result, width_cells))

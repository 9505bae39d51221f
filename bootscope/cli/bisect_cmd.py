"""`bootscope bisect-run`: for `git bisect run`, build the commit, boot it and compare it with the
reference (issue 7, seed 001).

Thin: the build, the boots, the decision and the exit code are
:func:`bootscope.usecases.bisect.bisect_step`; this module prints its one line on stderr.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from bootscope import defaults
from bootscope.cli import options
from bootscope.errors import InputError
from bootscope.metrics import DEFAULT_METRIC


def bisect_run(
    build: Annotated[
        str | None, typer.Option(help="Build command, run by the shell (e.g. 'make -j8 bzImage').")
    ] = None,
    kernel: Annotated[Path, typer.Option(help="The kernel image the build leaves.")] = Path(
        "arch/x86/boot/bzImage"
    ),
    reference: Annotated[
        str | None, typer.Option("--reference", help="RUN:VARIANT: the stored boots of the good kernel.")
    ] = None,
    old_baseline: Annotated[
        str | None, typer.Option("--baseline", hidden=True, help="Deprecated: --reference.")
    ] = None,
    metric: Annotated[str, typer.Option(help="Metric to compare.")] = DEFAULT_METRIC,
    threshold: Annotated[
        str | None,
        typer.Option(
            help="Slower by more than this is bad: 5% or 0.05 (default 5%; with --alert, half its step)."
        ),
    ] = None,
    n: Annotated[int, typer.Option("-n", help="Boots per batch.")] = 6,
    max_n: Annotated[int, typer.Option("--max-n", help="Most boots before giving up (exit 125).")] = 24,
    db: options.Db = defaults.DEFAULT_DB,
    append: Annotated[
        str | None, typer.Option(help="Kernel command line (default: the reference's).")
    ] = None,
    append_file: Annotated[
        Path | None,
        typer.Option("--append-file", help="Read the command line from this file after the build."),
    ] = None,
    alpha: Annotated[float, typer.Option(help="Significance level, split over the looks.")] = defaults.ALPHA,
    warmup: Annotated[int, typer.Option(help="Warm-up boots per batch.")] = 0,
    timeout: options.Timeout = None,
    jobs: options.Jobs = None,
    alert: Annotated[
        int | None,
        typer.Option("--alert", help="Start `git bisect` here on this alert's range (bootscope alerts)."),
    ] = None,
) -> int:
    """For `git bisect run`: build, boot, compare with the reference; exit 0 good, 1 bad, 125 skip.
    With --alert ID: start that bisect on the alert's revision range, its reference and metric."""
    from bootscope.lab.progress import SilentReporter
    from bootscope.usecases.bisect import BisectRequest, bisect_step

    if alert is not None:
        from bootscope.usecases.watch.bisect_alert import plan_alert_bisect, start_alert_bisect

        if reference is not None or old_baseline is not None:
            raise InputError("--alert finds the reference itself: leave out --reference")
        plan = plan_alert_bisect(db, alert, threshold)
        given = {"--build": build, "--append": append, "--append-file": append_file, "--timeout": timeout}
        step = [f"{name}={value}" for name, value in given.items() if value is not None]
        step += [
            f"--kernel={kernel}",
            f"-n={n}",
            f"--max-n={max_n}",
            f"--alpha={alpha}",
            f"--warmup={warmup}",
        ]
        step += [f"--jobs={jobs}"] if jobs is not None else []
        return start_alert_bisect(plan, step, db, Path.cwd())

    if old_baseline is not None:
        # --baseline is a variant's name in compare; here it named a stored run's variant.
        options.deprecated(f"--baseline {old_baseline}", f"--reference {old_baseline}")
    request = BisectRequest(
        reference=reference, kernel=kernel, metric=metric, threshold=threshold or "5%", n=n, max_n=max_n,
        build=build, append=append, append_file=append_file, alpha=alpha, warmup=warmup, timeout_s=timeout,
        old_baseline=old_baseline, jobs=1 if jobs is None else jobs,
    )  # fmt: skip
    answer = bisect_step(request, db, Path.cwd(), SilentReporter())
    print(f"bootscope bisect-run: {answer.message}", file=sys.stderr)
    # Returned, not raised: the CLI's main() exits with a command's non-zero return value.
    return answer.exit_code

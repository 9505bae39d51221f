"""`bootscope sweep`, `bootscope history`, `bootscope bisect-run`: regression hunting (issue 7, seed 001)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from bootscope import defaults
from bootscope.cli import options
from bootscope.errors import BootError, BootscopeError, InputError, StatsError
from bootscope.metrics import DEFAULT_METRIC
from bootscope.report.console import output_console

if TYPE_CHECKING:
    from bootscope.lab.progress import Reporter
    from bootscope.stats.attribution import DiffResult
    from bootscope.store import Store
    from bootscope.usecases.history import HistoryResult


def _definition(metric: str) -> str:
    from bootscope.metrics import DEFINITIONS

    if metric not in DEFINITIONS:
        raise InputError(f"unknown metric {metric!r}; known metrics: {', '.join(DEFINITIONS)}")
    return DEFINITIONS[metric]


def _reporter(fmt: str) -> Reporter:
    from bootscope.lab.progress import RichReporter, SilentReporter

    return SilentReporter() if fmt == "json" else RichReporter()


def _ci(ci: tuple[float, float] | list[float] | None) -> str:
    return f"[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "-"


def _interval(ci: tuple[float, float] | None) -> str:
    return "-" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def _p(p: float | None) -> str:
    return "-" if p is None else f"{p:.3g}"


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
    from bootscope.lab.executors import open_executor
    from bootscope.stats.compare import Options  # scipy: only when run
    from bootscope.store import Store
    from bootscope.usecases.sweep import build_sweep, run_sweep, sweep_json

    options.check_format(fmt, options.TABLE_JSON)
    setup = build_sweep(
        kernel=kernel,
        param_texts=param or [],
        plan_file=plan_file,
        metric=metric,
        settings=options.run_settings(
            samples=n,
            warmup=warmup,
            seed=seed,
            timeout=timeout,
            accel=accel,
            jobs=jobs,
            quiet_host=quiet_host,
            until=until,
            precision=precision,
            max_n=max_n,
        ),
    )
    _definition(setup.metric)
    with Store.open(db) as store, open_executor(executor_spec, jobs) as executor:
        result = run_sweep(
            setup.cells, setup.plan, store, setup.metric, Options(alpha=alpha), _reporter(fmt), executor
        )
    data = sweep_json(result)
    if fmt == "json":
        print(json.dumps(data, indent=2))
        return
    _print_sweep(data, [p.name for p in setup.params])


def _print_sweep(data: dict[str, Any], names: list[str]) -> None:
    from bootscope.stats.compare import FASTER, SLOWER

    console = output_console()
    table = Table(title=f"sweep: run {data['run']}, {escape(data['metric'])} (s), baseline = first cell")
    for name in names:
        table.add_column(escape(name))
    for column in ("n", "median", "shift", "95% CI", "p (Holm)", "verdict"):
        table.add_column(column, justify="right" if column != "verdict" else "left")
    for cell in data["cells"]:
        verdict = cell["verdict"]
        style = {FASTER: "green", SLOWER: "red"}.get(verdict, "")
        shown = f"[{style}]{escape(verdict)}[/{style}]" if style else escape(verdict)
        table.add_row(
            *(escape(cell["params"][name]) for name in names),
            str(cell["n"]),
            f"{cell['median']:.3f}",
            f"{cell['shift']['estimate']:+.3f}",
            _ci(cell["shift"]["ci"]),
            _p(cell["p"]),
            shown,
        )
    console.print(table)
    best = data["best"]
    best_text = ", ".join(f"{k}={v}" for k, v in best["params"].items()) if best else "-"
    console.print(f"best cell: {escape(best_text)}")
    effects = Table(title="main effects: median per level, pooled over the other parameters (s)")
    for column in ("parameter", "levels", "spread"):
        effects.add_column(column)
    for effect in data["main_effects"]["parameters"]:
        levels = "  ".join(f"{lv['level'] or '(none)'}: {lv['median']:.3f}" for lv in effect["levels"])
        effects.add_row(escape(effect["name"]), escape(levels), f"{effect['spread']:.3f}")
    console.print(effects)
    dominant = data["main_effects"]["dominant"]
    console.print(f"moves {escape(data['metric'])} most: {escape(dominant or '-')}")
    console.print(f"{escape(data['metric'])}: {escape(_definition(data['metric']))}")


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
    from bootscope.lab.plans.boot import VariantSpec, plan_with_settings
    from bootscope.store import Store
    from bootscope.usecases.history import (
        history_from_run,
        history_json,
        history_plan,
        resolve_versions,
        run_history,
    )

    options.check_format(fmt, options.TABLE_JSON)
    _definition(metric)
    if by:
        from bootscope.usecases.diff import check_kinds

        check_kinds(by)
    if (spec is None) == (from_run is None):
        raise InputError("give either SPEC (to boot a series) or --from-run RUN (to read one)")
    with Store.open(db) as store:
        if from_run is not None:
            result = history_from_run(store, from_run, metric, alpha)
        else:
            assert spec is not None
            kernels = resolve_versions(spec, versions)
            base = VariantSpec(
                name="base", kernel=kernels[0], append=append, smp=smp, mem_mb=mem, icount_shift=icount
            )
            settings = options.run_settings(
                samples=n, warmup=warmup, seed=seed, timeout=timeout, accel=accel, jobs=jobs,
                quiet_host=quiet_host, until=None, precision=None, max_n=None,
            )  # fmt: skip
            template = plan_with_settings((base,), {k: v for k, v in settings.items() if v is not None})
            result = run_history(history_plan(kernels, base, template), store, metric, alpha, _reporter(fmt))
        explained = _explain(store, result, by, alpha) if by else []
    changes = result.change_points.change_points
    if plot is not None:
        from bootscope.report.series_plot import plot_series

        plot_series(
            [p.name for p in result.positions],
            [p.samples for p in result.positions],
            [(p.median, p.median_ci) for p in result.positions],
            [(c.index, f"{c.shift:+.3f} s, p={c.p_adjusted:.2g}") for c in changes],
            metric,
            plot,
        )
    if fmt == "json":
        data = history_json(result)
        if by:
            from bootscope.report.diff_out import diff_dict

            data["explained_by"] = [{"after": step, **diff_dict(diff, 10)} for step, diff in explained]
        print(json.dumps(data, indent=2))
        return
    console = output_console()
    table = Table(title=f"history: run {result.run}, {escape(metric)} (s)")
    for column in ("#", "version", "kernel", "n", "median", "95% CI of median"):
        table.add_column(column)
    for i, position in enumerate(result.positions):
        table.add_row(
            str(i), escape(position.name), escape(position.kernel), str(position.n),
            f"{position.median:.3f}",
            _interval(position.median_ci),
        )  # fmt: skip
        for change in changes:
            if change.index == i:
                table.add_row(
                    "", f"[bold]^ change: {change.shift:+.3f} s[/bold]", f"CI {_ci(change.shift_ci)}", "",
                    "", f"p = {change.p_adjusted:.3g}",
                )  # fmt: skip
    console.print(table)
    if not changes:
        console.print(f"no change point at alpha {alpha} (flat within the noise)")
    for change in changes:
        before, after = result.positions[change.index].name, result.positions[change.index + 1].name
        console.print(
            f"change between {escape(before)} and {escape(after)}: {change.shift:+.3f} s "
            f"{_ci(change.shift_ci)}, p = {change.p_adjusted:.3g} (permutation, adjusted)"
        )
    for _step, diff in explained:
        from bootscope.report.diff_out import table as diff_table

        console.print(diff_table(diff, 5))
    console.print(f"method: {escape(result.change_points.method)}")
    console.print(f"{escape(metric)}: {escape(_definition(metric))}")


def _explain(
    store: Store, result: HistoryResult, by: list[str], alpha: float
) -> list[tuple[int, DiffResult]]:
    """Return, per change point of ``result``, the diff of the positions around it (``--by`` kinds)."""
    from bootscope.usecases.diff import check_kinds, explain_steps

    steps = [change.index for change in result.change_points.change_points]
    if result.run is None or not steps:
        return []
    return explain_steps(
        store, result.run, steps, metric=result.metric, kinds=check_kinds(by), alpha=alpha, fdr=alpha
    )


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
    threshold: Annotated[str, typer.Option(help="Slower by more than this is bad: 5% or 0.05.")] = "5%",
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
) -> int:
    """For `git bisect run`: build, boot, compare with the reference; exit 0 good, 1 bad, 125 skip."""
    from bootscope.lab.progress import SilentReporter
    from bootscope.usecases import bisect

    try:
        if old_baseline is not None:
            # --baseline is a variant's name in compare; here it named a stored run's variant.
            options.deprecated(f"--baseline {old_baseline}", f"--reference {old_baseline}")
            if reference not in (None, old_baseline):
                raise InputError(f"--baseline {old_baseline} and --reference {reference} disagree")
            reference = old_baseline
        if reference is None or ":" not in reference:
            raise InputError("--reference RUN:VARIANT is required (a stored run of the good kernel)")
        fraction = bisect.parse_threshold(threshold)
        _definition(metric)
        bisect.looks_allowed(n, max_n)
    except BootscopeError as error:
        return _bisect_exit(f"error: {error}", bisect.EXIT_ABORT)
    if build:
        ok, tail = bisect.run_build(build, Path.cwd())
        if not ok:
            return _bisect_exit(f"build failed, skipping this commit: {tail}", bisect.EXIT_SKIP)
    from bootscope.store import Store

    try:
        command_line = append
        if append_file is not None:
            try:
                command_line = append_file.read_text(encoding="utf-8").strip()
            except OSError as error:
                raise BootError(f"--append-file {append_file}: {error.strerror}") from None
        with Store.open(db) as store:
            good = bisect.load_reference(store, reference, metric)
            outcome = bisect.bisect_commit(
                store=store, baseline=good, kernel=kernel, append=command_line, metric=metric,
                threshold=fraction, alpha=alpha, n=n, max_n=max_n, warmup=warmup, timeout_s=timeout,
                reporter=SilentReporter(),
            )  # fmt: skip
    except (BootError, StatsError) as error:
        # This commit cannot be measured (it does not boot, or too few boots finished): skip it.
        return _bisect_exit(f"cannot test this commit, skipping: {error}", bisect.EXIT_SKIP)
    except BootscopeError as error:
        # Bad reference, store or options: every commit would fail alike, so stop the bisect.
        return _bisect_exit(f"error: {error}", bisect.EXIT_ABORT)
    return _bisect_exit(f"{outcome.message} (runs {', '.join(map(str, outcome.runs))})", outcome.exit_code)


def _bisect_exit(message: str, code: int) -> int:
    print(f"bootscope bisect-run: {message}", file=sys.stderr)
    # Returned, not raised: the CLI's main() exits with a command's non-zero return value.
    return code

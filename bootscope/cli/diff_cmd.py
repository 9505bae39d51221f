"""`bootscope diff`, `bootscope baseline save` and `bootscope check`: what got slower, and reference
values a CI can check new boots against (exit 0 pass, 1 regression, 125 cannot tell)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bootscope import defaults
from bootscope.cli import options
from bootscope.errors import InputError
from bootscope.metrics import DEFAULT_METRIC, LOGIN_PROMPT_S, SYSTEMD_USERSPACE_S
from bootscope.report.console import output_console

if TYPE_CHECKING:
    from bootscope.store import Store
    from bootscope.usecases.diff import BootParts
    from bootscope.usecases.reference import CheckResult

DIFF_FORMATS = ("table", "json", "mail", "html")
CHECK_FORMATS = ("table", "json")

By = Annotated[
    list[str] | None,
    typer.Option("--by", help="Component kinds: phase, initcall, gap, cpu, unit (repeat; default: all)."),
]
Metric = Annotated[str, typer.Option(help="The total whose shift is decomposed.")]

baseline_app = typer.Typer(
    name="baseline",
    help="Save a stored variant's boots as reference values for `bootscope check`.",
    no_args_is_help=True,
    rich_markup_mode=None,
    add_completion=False,
)


def _check_metric(metric: str) -> None:
    from bootscope.metrics import DEFINITIONS

    if metric not in DEFINITIONS:
        raise InputError(f"unknown metric {metric!r}; known metrics: {', '.join(DEFINITIONS)}")


def _warn(lines: list[str]) -> None:
    for line in lines:
        print(f"bootscope: warning: {line}", file=sys.stderr)


def diff(
    run: Annotated[str | None, typer.Argument(help="A stored run's id or 'latest'.")] = None,
    a_logs: Annotated[
        list[Path] | None, typer.Option("--a-logs", help="Side a: a log file or directory (repeat).")
    ] = None,
    b_logs: Annotated[
        list[Path] | None, typer.Option("--b-logs", help="Side b: a log file or directory (repeat).")
    ] = None,
    baseline: Annotated[
        str | None, typer.Option(help="RUN's variant to compare with (default: first).")
    ] = None,
    variant: Annotated[str | None, typer.Option(help="RUN's variant to explain (default: second).")] = None,
    by: By = None,
    top: Annotated[int, typer.Option("--top", help="Components shown.")] = 20,
    metric: Metric = DEFAULT_METRIC,
    alpha: Annotated[
        float, typer.Option(help="Significance level of the total and the intervals.")
    ] = defaults.ALPHA,
    fdr: Annotated[float, typer.Option(help="False discovery rate over the components.")] = defaults.ALPHA,
    db: options.Db = defaults.DEFAULT_DB,
    fmt: Annotated[str, options.format_option(DIFF_FORMATS, "table")] = "table",
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Write here instead of stdout.")
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option("--plot", help="Also draw the total and the --top components as bars (.png or .svg)."),
    ] = None,
) -> None:
    """What got slower: every phase, initcall, CPU, gap and unit compared, ranked by share of the total."""
    from bootscope.report import diff_out
    from bootscope.usecases.diff import check_kinds, diff_parts, diff_run, parts_from_logs

    options.check_format(fmt, DIFF_FORMATS)
    _check_metric(metric)
    kinds = check_kinds(by or [])
    if kinds == ("unit",) and metric == DEFAULT_METRIC:
        raise InputError(
            f"systemd's units start after Run /init, outside {DEFAULT_METRIC}: give --metric"
            f" {SYSTEMD_USERSPACE_S} (or {LOGIN_PROMPT_S}) with --by unit"
        )
    if top < 1:
        raise InputError("--top must be at least 1")
    if not 0 < fdr < 1:
        raise InputError(f"--fdr must lie between 0 and 1, not {fdr}")
    if (run is None) == (a_logs is None and b_logs is None):
        raise InputError("give either RUN or --a-logs and --b-logs")
    if run is not None:
        from bootscope.store import Store

        with Store.open(db) as store:
            result = diff_run(
                store,
                run,
                metric=metric,
                kinds=kinds,
                baseline=baseline,
                variant=variant,
                alpha=alpha,
                fdr=fdr,
            )
    else:
        if not a_logs or not b_logs:
            raise InputError("give both --a-logs and --b-logs")
        side_a, warn_a = parts_from_logs(a_logs, metric, kinds)
        side_b, warn_b = parts_from_logs(b_logs, metric, kinds)
        _warn(warn_a + warn_b)
        names = (a_logs[0].name or "a", b_logs[0].name or "b")
        if names[0] == names[1]:
            names = ("a", "b")
        result = diff_parts(
            side_a, side_b, metric=metric, names=names, kinds=kinds, source="logs", alpha=alpha, fdr=fdr
        )
    if plot is not None:
        from bootscope.report.diff_plot import plot_diff

        plot_diff(result, top, plot)
        print(f"wrote {plot}", file=sys.stderr)
    if fmt == "json":
        text = diff_out.to_json(result, top) + "\n"
    elif fmt == "mail":
        text = diff_out.to_mail(result)
    elif fmt == "html":
        text = diff_out.to_html(result, top)
    elif output is not None:
        text = diff_out.to_text(result, top)
    else:
        output_console().print(diff_out.table(result, top))
        return
    if output is None:
        sys.stdout.write(text)
        return
    from bootscope.report.atomic import write_text_atomically

    write_text_atomically(output, text)
    print(f"wrote {output}", file=sys.stderr)


def _split_run(text: str) -> tuple[str, str | None]:
    run, colon, variant = text.partition(":")
    if colon and not variant:
        raise InputError(f"{text!r}: expected RUN or RUN:VARIANT")
    return run, variant or None


def _run_variant_parts(
    store: Store, text: str, metric: str, every_component: bool = False
) -> tuple[str | None, list[BootParts]]:
    from bootscope.usecases.diff import parts_from_run

    run, variant = _split_run(text)
    run_id, by_variant = parts_from_run(store, run, metric, every_component=every_component)
    if variant is None:
        if len(by_variant) != 1:
            raise InputError(
                f"run {run_id} has variants {', '.join(by_variant)}; name one as {run_id}:VARIANT"
            )
        variant = next(iter(by_variant))
    if variant not in by_variant:
        raise InputError(f"variant {variant!r} is not in run {run_id} (variants: {', '.join(by_variant)})")
    return variant, by_variant[variant]


@baseline_app.command("save")
def baseline_save(
    source: Annotated[str, typer.Argument(help="RUN or RUN:VARIANT (RUN: an id or 'latest').")],
    output: Annotated[Path, typer.Option("-o", "--output", help="The reference file to write (JSON).")],
    db: options.Db = defaults.DEFAULT_DB,
) -> None:
    """Write a stored variant's samples (every metric, every component) as a versioned reference file."""
    from bootscope.report.atomic import write_text_atomically
    from bootscope.store import Store
    from bootscope.usecases.reference import reference_document

    with Store.open(db) as store:
        # Every component, the userspace phases and systemd's units too: `check --metric` picks
        # those that decompose the metric it checks.
        variant, parts = _run_variant_parts(store, source, DEFAULT_METRIC, every_component=True)
        document = reference_document(store, _split_run(source)[0], variant, parts)
    write_text_atomically(output, json.dumps(document, indent=1) + "\n")
    components = sum(len(names) for names in document["components"].values())
    print(
        f"wrote {output}: run {document['source']['run']} variant {variant}, {len(parts)} boots, "
        f"{len(document['metrics'])} metrics, {components} components",
        file=sys.stderr,
    )


def check(
    inputs: Annotated[list[str], typer.Argument(help="RUN[:VARIANT], or log files and directories.")],
    against: Annotated[Path, typer.Option("--against", help="The reference file (baseline save).")],
    threshold: Annotated[
        str, typer.Option(help="Slower by more than this is a regression: 5% or 0.05.")
    ] = "5%",
    min_shift: Annotated[
        str, typer.Option("--min-shift", help="Smallest shift a component must exceed: 1ms, 0.5ms, ...")
    ] = "1ms",
    metric: Metric = DEFAULT_METRIC,
    alpha: Annotated[
        float, typer.Option(help="Significance level (FDR over the components).")
    ] = defaults.ALPHA,
    db: options.Db = defaults.DEFAULT_DB,
    fmt: Annotated[str, options.format_option(CHECK_FORMATS, "table")] = "table",
) -> int:
    """For CI: new boots against a reference; exit 0 pass, 1 regression (named), 125 cannot tell."""
    from bootscope.amounts import parse_amount
    from bootscope.usecases.bisect import parse_threshold
    from bootscope.usecases.diff import parts_from_logs
    from bootscope.usecases.reference import check_boots, load_reference

    options.check_format(fmt, CHECK_FORMATS)
    _check_metric(metric)
    fraction = parse_threshold(threshold)
    floor_s, relative = parse_amount(min_shift, "s", "--min-shift")
    if floor_s is None or relative is not None or floor_s < 0:
        raise InputError("--min-shift must be an amount such as 1ms, not a percentage")
    reference = load_reference(against)
    paths = [Path(item) for item in inputs]
    if len(inputs) == 1 and not paths[0].exists() and inputs[0] != "-":
        from bootscope.store import Store

        with Store.open(db) as store:
            _, boots = _run_variant_parts(store, inputs[0], metric)
    else:
        boots, warnings = parts_from_logs(paths, metric, strict=True)
        _warn(warnings)
    result = check_boots(
        reference, boots, metric=metric, threshold=fraction, alpha=alpha, min_shift_s=floor_s
    )
    if fmt == "json":
        print(json.dumps(_check_json(result), indent=2))
    else:
        _print_check(result)
    print(f"bootscope check: {result.message}", file=sys.stderr)
    return result.exit_code


def _check_json(result: CheckResult) -> dict[str, object]:
    from dataclasses import asdict

    return asdict(result)


def _print_check(result: CheckResult) -> None:
    from rich.markup import escape
    from rich.table import Table

    console = output_console()
    total = result.total
    if total is not None:
        ci = f" [{total.shift_ci[0]:+.4f}, {total.shift_ci[1]:+.4f}]" if total.shift_ci else ""
        console.print(
            f"{escape(result.metric)}: {total.verdict}, shift {total.shift:+.4f} s{ci} against margin "
            f"{total.margin:.4f} s, n = {total.n_candidate} vs {total.n_baseline} reference boots"
        )
    console.print(f"{result.components_checked} components checked")
    if result.regressions:
        table = Table(title="regressions")
        for column in ("kind", "component", "shift (s)", "margin (s)", "q"):
            table.add_column(column)
        for finding in result.regressions:
            d = finding.decision
            table.add_row(
                finding.kind,
                escape(finding.name),
                f"{d.shift:+.4f}" if d else f"new: {finding.new_median_s or 0:.4f}",
                f"{d.margin:.4f}" if d else "-",
                "-" if finding.q_bad is None else f"{finding.q_bad:.3g}",
            )
        console.print(table)

"""``bootscope fleet import|summary|outliers|compare``: the boot logs of a whole fleet, in one query.

Exit codes: 0 done; 1 ``compare`` found the canary slower (pooled or in a stratum); 2 bad options or
metadata CSV; 4 a database failure; 5 ``import`` found no readable log among the files given.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from bootscope import defaults
from bootscope.cli import options
from bootscope.metrics import DEFAULT_METRIC
from bootscope.report.console import output_console

app = typer.Typer(
    name="fleet",
    help="Import the boot logs of many hosts; query and compare them.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

ParquetOpt = Annotated[
    Path | None,
    typer.Option("--parquet", help="Directory of the Parquet copy the queries read (default: beside --db)."),
]
MetricOpt = Annotated[str, typer.Option("--metric", help=f"Metric (default {DEFAULT_METRIC}).")]
ByOpt = Annotated[
    str,
    typer.Option(
        "--by",
        help="Fields to group by, comma-separated: metadata CSV columns, arch, cpus, memory_gib,"
        " kernel_series, kernel_release, format (e.g. model,kernel_series).",
    ),
]
Format = Annotated[str, options.format_option(options.TABLE_JSON, "table")]


def _emit(document: object) -> None:
    sys.stdout.write(json.dumps(document) + "\n")


def fleet_import(
    targets: Annotated[
        list[str], typer.Argument(metavar="DIR|FILES...", help="A directory of logs, or log files.")
    ],
    meta: Annotated[
        Path | None,
        typer.Option(
            "--meta", help="CSV of host metadata: a 'file' column (relative to DIR), other columns fields."
        ),
    ] = None,
    jobs: Annotated[
        int | None,
        typer.Option("-j", "--jobs", help="Logs analysed at once, one process each (default: every core)."),
    ] = None,
    db: options.Db = defaults.DEFAULT_DB,
    parquet: ParquetOpt = None,
    fmt: Format = "table",
) -> None:
    """Import many boot logs (any format analyze reads, LAVA output.yaml, KCIDB JSON, pasted
    systemd-analyze output) with host metadata, analysing them on every core; a file already
    imported is skipped, a bad one listed."""
    from bootscope.report.fleet_out import import_json, render_import
    from bootscope.usecases.fleet.importer import import_into

    options.check_format(fmt, options.TABLE_JSON)
    report = import_into(db, parquet, targets, meta, jobs)
    if fmt == "json":
        _emit(import_json(report))
    else:
        render_import(report, output_console())
    if report.failure is not None:
        raise report.failure


def summary(
    by: ByOpt = "",
    metric: MetricOpt = DEFAULT_METRIC,
    db: options.Db = defaults.DEFAULT_DB,
    parquet: ParquetOpt = None,
    fmt: Format = "table",
) -> None:
    """Per group: p50/p90/p99 of ok boots with distribution-free 95% intervals; boots by outcome,
    failed (a panic, oops or hang) apart from incomplete (the log stops before init), and the failure
    rate failed / (ok + failed) with an exact binomial interval."""
    from bootscope.report.fleet_out import render_summary, summary_json
    from bootscope.usecases.fleet.query import fleet_summary

    options.check_format(fmt, options.TABLE_JSON)
    result = fleet_summary(db, parquet, metric, by)
    if fmt == "json":
        _emit(summary_json(result))
    else:
        render_summary(result, output_console())


def outliers(
    by: ByOpt = "",
    metric: MetricOpt = DEFAULT_METRIC,
    z_cut: Annotated[
        float, typer.Option("--z", help="Robust z beyond which a boot is listed (default 3.5).")
    ] = 3.5,
    db: options.Db = defaults.DEFAULT_DB,
    parquet: ParquetOpt = None,
    fmt: Format = "table",
) -> None:
    """Boots far from their group's median, in MADs (modified z-score, Iglewicz and Hoaglin)."""
    from bootscope.report.fleet_out import outliers_json, render_outliers
    from bootscope.usecases.fleet.query import fleet_outliers

    options.check_format(fmt, options.TABLE_JSON)
    found = fleet_outliers(db, parquet, metric, by, z_cut)
    if fmt == "json":
        _emit(outliers_json(found))
    else:
        render_outliers(found, output_console())


def compare(
    canary: Annotated[
        str, typer.Option("--canary", help="The cohort under test (a value of --cohort-field).")
    ],
    control: Annotated[str, typer.Option("--control", help="The cohort it is judged against.")],
    strata: Annotated[
        str | None,
        typer.Option("--strata", help="Field whose values are compared apart, then pooled (e.g. model)."),
    ] = None,
    cohort_field: Annotated[str, typer.Option("--cohort-field", help="Field naming the cohort.")] = "cohort",
    metric: MetricOpt = DEFAULT_METRIC,
    alpha: Annotated[
        float, typer.Option("--alpha", help="Significance level; intervals at 1 - alpha.")
    ] = defaults.ALPHA,
    db: options.Db = defaults.DEFAULT_DB,
    parquet: ParquetOpt = None,
    fmt: Format = "table",
) -> None:
    """Canary against control, stratum by stratum (Hodges-Lehmann) and pooled (van Elteren); exit 1
    when the canary is slower."""
    from bootscope.report.fleet_out import compare_json, render_compare
    from bootscope.usecases.fleet.query import fleet_compare

    options.check_format(fmt, options.TABLE_JSON)
    result = fleet_compare(
        db, parquet, metric, canary, control, cohort_field=cohort_field, strata=strata, alpha=alpha
    )
    if fmt == "json":
        _emit(compare_json(result))
    else:
        render_compare(result, output_console())
    if result.exit_code:
        raise typer.Exit(result.exit_code)


app.command("import")(fleet_import)
app.command("summary")(summary)
app.command("outliers")(outliers)
app.command("compare")(compare)

"""`bootscope baseline save` and `bootscope check`: reference values a CI can check new boots against
(exit 0 pass, 1 regression, 125 cannot tell)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from bootscope import defaults
from bootscope.cli import options
from bootscope.metrics import DEFAULT_METRIC
from bootscope.report import notes

CHECK_FORMATS = ("table", "json")

Metric = Annotated[str, typer.Option(help="The total checked (components: those that decompose it).")]
Threshold = Annotated[str, typer.Option(help="Slower by more than this is a regression: 5% or 0.05.")]
Alpha = Annotated[float, typer.Option(help="Significance level (FDR over the components).")]

baseline_app = typer.Typer(
    name="baseline",
    help="Save boots (a stored variant or logs) as reference values for `bootscope check`.",
    no_args_is_help=True,
    rich_markup_mode=None,
    add_completion=False,
)


@baseline_app.command("save")
def baseline_save(
    inputs: Annotated[list[str], typer.Argument(help="RUN[:VARIANT], or log files and directories.")],
    output: Annotated[Path, typer.Option("-o", "--output", help="The reference file to write (JSON).")],
    threshold: Threshold = "5%",
    metric: Metric = DEFAULT_METRIC,
    alpha: Alpha = defaults.ALPHA,
    db: options.Db = defaults.DEFAULT_DB,
) -> None:
    """Write the boots of a stored variant or of logs (every metric, every component) as a versioned
    reference file, and say what it can prove: the slowdown a check catches, the boots it needs."""
    from bootscope.report.atomic import write_text_atomically
    from bootscope.report.check_out import reference_text, saved_text
    from bootscope.usecases.check import save_baseline

    saved = save_baseline(inputs, db, threshold=threshold, alpha=alpha, metric=metric)
    write_text_atomically(output, reference_text(saved.document))
    print(saved_text(output, saved), file=sys.stderr)


def check(
    inputs: Annotated[list[str], typer.Argument(help="RUN[:VARIANT], or log files and directories.")],
    against: Annotated[
        Path,
        typer.Option(
            "--against",
            help="The reference file (baseline save), or a directory: a run's is picked by fingerprint.",
        ),
    ],
    threshold: Threshold = "5%",
    min_shift: Annotated[
        str, typer.Option("--min-shift", help="Smallest shift a component must exceed: 1ms, 0.5ms, ...")
    ] = "1ms",
    metric: Metric = DEFAULT_METRIC,
    alpha: Alpha = defaults.ALPHA,
    db: options.Db = defaults.DEFAULT_DB,
    fmt: Annotated[str, options.format_option(CHECK_FORMATS, "table")] = "table",
    junit: Annotated[
        Path | None, typer.Option("--junit", help="Also write the verdict as JUnit XML (Jenkins, GitLab).")
    ] = None,
    markdown: Annotated[
        Path | None, typer.Option("--markdown", help="Also write the verdict as a Markdown PR comment.")
    ] = None,
) -> int:
    """For CI: new boots against a reference; exit 0 pass, 1 regression (named), 125 cannot tell,
    2 bad input (no reference, no store, unknown run), 5 a log with no timestamps. The --junit and
    --markdown files are written whatever the verdict."""
    from bootscope.report.atomic import write_text_atomically
    from bootscope.report.check_junit import check_junit
    from bootscope.report.check_markdown import check_markdown
    from bootscope.report.check_out import check_json, render_check
    from bootscope.report.check_rows import CheckAsked
    from bootscope.report.console import output_console
    from bootscope.usecases.check import check as check_inputs

    options.check_format(fmt, CHECK_FORMATS)
    result = check_inputs(
        inputs, against, threshold=threshold, min_shift=min_shift, metric=metric, alpha=alpha, db=db,
        warn=notes.warning,
    )  # fmt: skip
    if fmt == "json":
        print(check_json(result))
    else:
        render_check(result, output_console())
    if result.not_like_for_like:
        notes.warning(result.not_like_for_like)
    for line in result.notes:
        notes.say(line)
    print(f"bootscope check: {result.message}", file=sys.stderr)
    asked = CheckAsked(str(against), threshold, min_shift, alpha)
    if junit is not None:
        write_text_atomically(junit, check_junit(result, asked))
    if markdown is not None:
        write_text_atomically(markdown, check_markdown(result, asked))
    return result.exit_code

"""``bootscope diff``'s one render: the diff in the format asked for, to stdout or a file, and the
optional bar chart."""

from __future__ import annotations

import sys
from pathlib import Path

from bootscope.report import diff_html, diff_mail, diff_out
from bootscope.report.console import output_console
from bootscope.stats.attribution import DiffResult


def write_diff(result: DiffResult, fmt: str, top: int, output: Path | None, plot: Path | None) -> None:
    """Draw the ``top`` components as bars to ``plot`` (.png or .svg) when given, then write the
    diff as ``fmt`` (table, json, mail or html) to ``output`` (atomically; None: stdout, where the
    table is rich's). Each file written is named on stderr."""
    if plot is not None:
        from bootscope.report.diff_plot import plot_diff  # matplotlib: only for --plot

        plot_diff(result, top, plot)
        print(f"wrote {plot}", file=sys.stderr)
    if fmt == "json":
        text = diff_out.to_json(result, top) + "\n"
    elif fmt == "mail":
        text = diff_mail.to_mail(result)
    elif fmt == "html":
        text = diff_html.to_html(result, top)
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

"""``bootscope analyze --run ID --boot K``: analyze a boot that ``bootscope run`` stored.

The stored log is the raw console capture with host arrival times; it is parsed again exactly as a
log file would be, so a better parser later gives better answers for old runs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from bootscope.analyze import analyze_boot
from bootscope.errors import InputError
from bootscope.parse import parse_captured
from bootscope.store import Store


def analyze_stored(
    run: str | None,
    boot: int | None,
    db: str,
    logs: Sequence[str] | None,
    *,
    fmt: str,
    as_json: bool,
    top: int,
    marker: str | None,
) -> None:
    """Print the analysis of boot ``boot`` (its index in the run) of experiment ``run`` (or
    ``"latest"``) stored in ``db``. Raises InputError when no run, no boot or also LOG files are
    given; StoreError for a missing database, run or boot; ParseError if the log has no timestamp."""
    if run is None:
        raise InputError("give LOG files to analyze, or --run ID --boot K for a stored boot")
    if logs:
        raise InputError("give LOG files or --run ID, not both")
    if boot is None:
        raise InputError("--run needs --boot K: the boot's index in the run (see `bootscope export`)")
    with Store.open(db) as store:
        experiment = store.experiment(run)
        captured = store.boot_log(experiment.id, boot)
    parsed = parse_captured(captured, fmt)
    title = f"run {experiment.id} boot {boot}"
    if as_json:
        from bootscope.report.json_out import write_analysis_document

        write_analysis_document(
            sys.stdout,
            title,
            (analyze_boot(lines, top_n=top, marker_regex=marker) for lines in parsed.boots),
            lambda: (parsed.format, len(parsed.boots), list(parsed.warnings), 0),
        )
        sys.stdout.write("\n")
    else:
        from bootscope.cli.analyze_cmd import show_boots

        out = Console(highlight=False)
        show_boots(parsed.boots, out, top_n=top, marker=marker, title=title)
        out.print(Text(f"{title} ({db}): format {parsed.format}"))
    for message in parsed.warnings:
        print(f"bootscope: warning: {message}", file=sys.stderr)

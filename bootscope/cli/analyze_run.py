"""``bootscope analyze --run ID --boot K``: analyze a boot that ``bootscope run`` stored.

The stored log is the raw console capture with host arrival times; it is read again exactly as
``bootscope run`` read it when the boot ended (:mod:`bootscope.analyze.stored`), so the host-side
metrics appear, a ``quiet`` console still shows what can be measured, and a better parser later gives
better answers for old runs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from bootscope.analyze.stored import analyze_stored_boot
from bootscope.errors import InputError
from bootscope.report.screen import Screen
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
    verbose: bool = False,
) -> None:
    """Print the analysis of boot ``boot`` (its index in the run) of experiment ``run`` (or
    ``"latest"``) stored in ``db``, with the host-side metrics (seconds from QEMU's start). The
    variant's own ``--marker`` applies unless ``marker`` is given; ``verbose`` shows every section in
    full. Raises InputError when no run, no boot or also LOG files are given; StoreError for a missing
    database, run or boot."""
    if run is None:
        raise InputError("give LOG files to analyze, or --run ID --boot K for a stored boot")
    if logs:
        raise InputError("give LOG files or --run ID, not both")
    if boot is None:
        raise InputError("--run needs --boot K: the boot's index in the run (see `bootscope export`)")
    if top < 1:
        raise InputError("--top must be at least 1")
    with Store.open(db) as store:
        stored = analyze_stored_boot(store, run, boot, marker=marker, top_n=top, fmt=fmt)
    experiment, record, analysis = stored.experiment, stored.record, stored.analysis
    title = f"run {experiment.id} boot {boot}"
    if as_json:
        from bootscope.report.json_out import write_analysis_document

        write_analysis_document(
            sys.stdout,
            title,
            iter((analysis.breakdown,)),
            lambda: (analysis.format, 1, list(analysis.warnings), 0),
        )
        sys.stdout.write("\n")
    else:
        from bootscope.report.boot_view import show_breakdown

        screen = Screen.stdout()
        heading = f"{title}: variant {record.variant}, outcome {record.outcome}"
        show_breakdown(analysis.breakdown, screen, heading, top, verbose=verbose)
        screen.line(f"{title} ({db}): format {analysis.format}")
    for message in (*analysis.warnings, *analysis.breakdown.warnings):
        print(f"bootscope: warning: {message}", file=sys.stderr)
    if analysis.note:
        print(f"bootscope: note: {analysis.note}", file=sys.stderr)

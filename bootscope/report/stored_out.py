"""``bootscope analyze --run ID --boot K`` rendered: a stored boot's analysis as the JSON document or
the boot view, then its warnings and note on stderr."""

from __future__ import annotations

import sys

from bootscope.analyze.stored import StoredBoot
from bootscope.report.screen import Screen


def write_stored(stored: StoredBoot, *, db: str, as_json: bool, top: int, verbose: bool) -> None:
    """Write the analysis of ``stored`` (from the store ``db``) to stdout: the analysis JSON
    document, or the glance view (``verbose``: every section in full) with the ``top`` largest
    gaps and initcalls; then its warnings and note on stderr."""
    experiment, record, analysis = stored.experiment, stored.record, stored.analysis
    title = f"run {experiment.id} boot {record.index}"
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

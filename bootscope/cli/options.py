"""Options shared by several commands, declared once so that one name means one thing everywhere.

``-n`` is always the number of measurements per variant (boots; for ``kexec``, reboots per chain, a
chain being one slot), ``--format`` always the OUTPUT format and ``--input-format`` the log format,
``--verbose`` the full view, ``--seed`` the seed of the measurement order, ``--db`` the store.

The old ``--format LOGFORMAT`` of analyze, report, trace and plot is kept for one release: a log
format name given to ``--format`` is taken as ``--input-format`` with a deprecation note on stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated

import typer

from bootscope.errors import InputError
from bootscope.parse import FORMATS

AUTO = "auto"

InputFormatOpt = Annotated[
    str, typer.Option("--input-format", help=f"Log format: {AUTO} (detect), {', '.join(FORMATS)}.")
]
Db = Annotated[str, typer.Option("--db", help="SQLite path or database URL.")]
Seed = Annotated[int | None, typer.Option("--seed", help="Seed of the measurement order (default: random).")]
Jobs = Annotated[int | None, typer.Option("-j", "--jobs", help="Slots run at once (default: 1).")]
Accel = Annotated[str | None, typer.Option("--accel", help="auto, kvm or tcg (default: auto).")]
QuietHost = Annotated[
    bool, typer.Option("--quiet-host", help="Wait for an idle host; re-run disturbed measurements.")
]
Resume = Annotated[
    str | None, typer.Option("--resume", help="Finish stored experiment ID (or 'latest') after a crash.")
]
Timeout = Annotated[float | None, typer.Option("--timeout", help="Seconds one slot may take.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Show everything, absent values included.")]


def resolve_formats(
    format_value: str | None, input_format: str, output_choices: Sequence[str], default_output: str
) -> tuple[str, str]:
    """Return ``(output format, input format)`` from ``--format`` and ``--input-format``.

    A log format name (or ``auto``) given to ``--format`` is the deprecated spelling of
    ``--input-format``: it is taken as such and a one-line note goes to stderr. Raises InputError for
    a ``--format`` that is neither, or for two different input formats."""
    if format_value is None or format_value in output_choices:
        return (format_value or default_output, input_format)
    if format_value == AUTO or format_value in FORMATS:
        if input_format != AUTO and input_format != format_value:
            raise InputError(f"--format {format_value} and --input-format {input_format} disagree")
        print(
            f"bootscope: note: --format {format_value} names the log format: use --input-format"
            f" {format_value} (--format is the output format: {', '.join(output_choices)});"
            " the old spelling goes in the next release",
            file=sys.stderr,
        )
        return (default_output, format_value)
    raise InputError(
        f"--format {format_value}: choose an output format ({', '.join(output_choices)});"
        f" the log format is --input-format ({AUTO}, {', '.join(FORMATS)})"
    )

"""``bootscope analyze LOG...``: where did each boot's time go?"""

from __future__ import annotations

import gc
import io
import json
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from bootscope import defaults
from bootscope.analyze import analyze_boot
from bootscope.analyze.breakdown import analyze_columns
from bootscope.analyze.handover import with_kexec_start
from bootscope.cli.options import InputFormatOpt, VerboseOpt, resolve_formats
from bootscope.errors import InputError, ParseError
from bootscope.model import Breakdown, LogLine
from bootscope.parse import SMALL_LOG_CHARS, BootColumns, LineBoots, scan_boots
from bootscope.parse.untimed import read_untimed
from bootscope.report.json_out import write_analysis_document
from bootscope.report.screen import Screen
from bootscope.sources.files import BLOCK_BYTES, TextSource, read_text_lines, stdin_rereadable

if TYPE_CHECKING:  # rich only for --verbose and the rarer views: the glance view is plain text
    from rich.console import Console

    from bootscope.parse.chunked import BlockBoots  # numpy: only for logs too big for the line path

LogsArg = Annotated[
    list[str] | None, typer.Argument(metavar="LOG...", help="Logs ('-' stdin; .gz/.xz/.zst ok).")
]
OUTPUT_FORMATS = ("table", "json")
FormatOpt = Annotated[
    str | None, typer.Option("--format", help=f"Output format: {', '.join(OUTPUT_FORMATS)} (default table).")
]
BootOpt = Annotated[int | None, typer.Option("--boot", help="Boot N (1-based); default the last.")]
TopOpt = Annotated[int, typer.Option("--top", help="How many gaps and initcalls to list.")]
RunOpt = Annotated[str | None, typer.Option("--run", help="A stored run's id (or latest); with --boot K.")]
DbOpt = Annotated[str, typer.Option("--db", help="Database of --run (SQLite path or URL).")]
MarkerOpt = Annotated[
    str | None, typer.Option("--marker", help="Regex of the line that ends userspace start.")
]


def analyze(
    logs: LogsArg = None,
    output_format: FormatOpt = None,
    input_format: InputFormatOpt = "auto",
    boot: BootOpt = None,
    top: TopOpt = defaults.TOP_N,
    marker: MarkerOpt = None,
    run: RunOpt = None,
    db: DbOpt = defaults.DEFAULT_DB,
    verbose: VerboseOpt = False,
) -> None:
    """Show where boot time went in kernel logs (dmesg, kmsg, journalctl, grabserial, consoles).

    The JSON document (--format json) holds every boot unless --boot picks one."""
    output_format, fmt = resolve_formats(output_format, input_format, OUTPUT_FORMATS, "table")
    as_json = output_format == "json"
    if run is not None or not logs:  # a boot stored by `bootscope run`
        from bootscope.report.stored_out import write_stored  # sqlalchemy: only for a stored boot
        from bootscope.usecases.stored_boot import stored_analysis

        stored = stored_analysis(run, boot, db, logs, fmt=fmt, top=top, marker=marker)
        write_stored(stored, db=db, as_json=as_json, top=top, verbose=verbose)
        return
    if boot is not None and boot < 1:
        raise InputError("--boot counts from 1")
    if top < 1:
        raise InputError("--top must be at least 1")
    with _without_cyclic_gc(), stdin_rereadable(logs):  # a paste is read twice (stamps, systemd)
        out = None if as_json else Screen.stdout()
        if as_json and len(logs) > 1:
            sys.stdout.write("[")
        for position, path in enumerate(logs):
            if as_json and position:
                sys.stdout.write(",\n")
            # A file's JSON is built aside: a file that turns out to hold no kernel timestamp may be
            # pasted systemd-analyze output, whose document replaces the half-written one.
            document = io.StringIO() if as_json else None
            try:
                _analyze_file(
                    path,
                    out,
                    document,
                    fmt=fmt,
                    boot=boot,
                    top=top,
                    marker=marker,
                    verbose=verbose,
                    line_path_chars=SMALL_LOG_CHARS // len(logs),
                )
            except ParseError as error:
                if not _systemd_text(path, out, document, top):
                    # no line is timed: show what the text still says, then the one-line error (exit 5)
                    facts = read_untimed(read_text_lines(path))
                    from bootscope.report.untimed_text import render_untimed, untimed_json

                    if out is not None:
                        render_untimed(facts, _table_console(), top, title=path)
                    else:
                        sys.stdout.write(json.dumps(untimed_json(facts, path, str(error))) + "\n")
                    raise
            if document is not None:
                sys.stdout.write(document.getvalue())
        if as_json and len(logs) > 1:
            sys.stdout.write("]\n")


def _analyze_file(
    path: str,
    out: Screen | None,
    document: io.StringIO | None,
    *,
    fmt: str,
    boot: int | None,
    top: int,
    marker: str | None,
    verbose: bool,
    line_path_chars: int,
) -> None:
    # The line path saves numpy's import on a small log; over many logs the faster block scan wins
    # once numpy is in, so the logs of one command share one SMALL_LOG_CHARS of line path.
    source = read_text_lines(path)
    stream = scan_boots(source.blocks(BLOCK_BYTES), fmt, line_path_chars=line_path_chars)
    if document is not None:

        def finish() -> tuple[str, int, list[str], int]:
            return (stream.format, stream.boot_count, _warnings(stream, source), source.undecodable_bytes)

        write_analysis_document(document, path, _selected(stream, boot, top, marker), finish)
    elif out is not None:
        chosen = show_boots(stream, out, boot=boot, top_n=top, marker=marker, title=path, verbose=verbose)
        out.line(f"{path}: format {stream.format}, {stream.boot_count} boot(s), showing boot {chosen}")
    for message in _warnings(stream, source):
        print(f"bootscope: warning: {message}", file=sys.stderr)


def _systemd_text(path: str, out: Screen | None, document: io.StringIO | None, top: int) -> bool:
    """Show ``path`` as pasted systemd-analyze output; False when it holds none (the caller then
    reports the log as untimed)."""
    from bootscope.parse.systemd import parse_analyze_output
    from bootscope.report.systemd_text import render_systemd, systemd_json

    accounting = parse_analyze_output(read_text_lines(path))
    if accounting is None:
        return False
    if document is not None:
        document.seek(0)
        document.truncate()
        document.write(json.dumps(systemd_json(accounting, path)) + "\n")
    elif out is not None:
        from rich.text import Text

        console = _table_console()
        console.rule(Text(f"{path}: systemd-analyze output"), style="bold")
        render_systemd(accounting, console, top)
    return True


def _table_console() -> Console:
    from bootscope.report.console import view_console

    return view_console()


@contextmanager
def _without_cyclic_gc() -> Iterator[None]:
    # The scan of a big log creates hundreds of thousands of short-lived tuples and strings per
    # block, none of them in a cycle; the cyclic collector, triggered by the allocation count,
    # walks them again and again (about 10 % of the CPU time of `analyze` on a 200 MB log).
    # Switching it off is process-wide, so it is done here, for this command only, and undone.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _warnings(stream: BlockBoots | LineBoots, source: TextSource) -> list[str]:
    return [*stream.warnings, *source.warnings]


def _selected(
    boots: Iterable[BootColumns], boot: int | None, top: int, marker: str | None
) -> Iterator[Breakdown]:
    found = 0
    for number, (columns, kexec_ns) in enumerate(with_kexec_start(boots), start=1):
        found = number
        if boot is None or number == boot:
            # the JSON holds the top initcalls only, so the full list is not built
            yield analyze_columns(
                columns, top_n=top, marker_regex=marker, all_initcalls=False, kexec_start_ns=kexec_ns
            )
    if boot is not None and boot > found:
        raise InputError(f"there is no boot {boot}: the log holds {found} boot(s)")


def show_boots(
    boots: Iterable[Sequence[LogLine]] | Iterable[BootColumns],
    screen: Screen,
    *,
    boot: int | None = None,
    top_n: int = defaults.TOP_N,
    marker: str | None = None,
    title: str = "",
    verbose: bool = False,
) -> int:
    """Render one of already-parsed ``boots`` (``boot``, 1-based; default the last) and return its number.

    The glance view goes to ``screen``; ``verbose`` shows every section in full (with rich). Only
    the chosen boot is analyzed and at most one boot is held at a time. Raises InputError if ``boot``
    is beyond the last boot.
    """
    chosen: Sequence[LogLine] | BootColumns | None = None
    number = found = 0
    kexec_ns: int | None = None  # the boot before started the chosen one by kexec at this host stamp
    every: Iterable[Sequence[LogLine] | BootColumns] = boots
    for found, (lines, started_ns) in enumerate(with_kexec_start(every), start=1):
        if boot is None or found == boot:
            chosen, number, kexec_ns = lines, found, started_ns
    if chosen is None:
        raise InputError(f"there is no boot {boot}: {title or 'the log'} holds {found} boot(s)")
    if isinstance(chosen, BootColumns):
        breakdown = analyze_columns(chosen, top_n=top_n, marker_regex=marker, kexec_start_ns=kexec_ns)
    else:
        breakdown = analyze_boot(chosen, top_n=top_n, marker_regex=marker, kexec_start_ns=kexec_ns)
    from bootscope.report.boot_view import show_breakdown  # the text views: not for --format json

    show_breakdown(breakdown, screen, f"{title} boot {number} of {found}", top_n, verbose=verbose)
    for message in breakdown.warnings:
        print(f"bootscope: warning: {message}", file=sys.stderr)
    return number

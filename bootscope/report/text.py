"""One boot's Breakdown in the terminal in full (``--verbose``; the default is the glance view of
:mod:`bootscope.report.text_glance`): identity, metrics with
definitions, phases, gaps as bars (in the spirit of "Biggest time: ... (1.7 seconds - 40 %)" in
the kexec boot-time breakdowns of live-update hosts),
initcalls, CPU bring-up, advice.

Log text is hostile: every string from a log goes through ``clean`` (control characters and escape
sequences shown as ``\\xNN``) and into ``rich.text.Text``, never into markup.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from bootscope.metrics import BOOT_LOG_DEFINITIONS, PREKERNEL_METRICS
from bootscope.model import Breakdown
from bootscope.report.text_cells import bar as _bar
from bootscope.report.text_cells import clean as _clean
from bootscope.report.text_cells import initcall_cells, unfinished_lines
from bootscope.report.text_cells import seconds as _s
from bootscope.report.text_glance import panic_line, summary_line
from bootscope.report.text_prekernel import bootstage_table, prekernel_lines


def render_breakdown(b: Breakdown, console: Console, top_n: int) -> None:
    """Print one boot's breakdown to ``console`` in full (times in s, initcall durations in ms): the
    summary line, then every section, with what the log lacks said row by row; returns None."""
    console.print(Text(summary_line(b), style="bold"))
    if b.panic is not None:
        console.print(Text(panic_line(b.panic), style="bold red"))
    _identity(b, console)
    _prekernel(b, console)
    _metrics(b, console)
    _phases(b, console)
    _gaps(b, console)
    _initcalls(b, console, top_n)
    _cpus(b, console)
    _advice(b, console)


def _identity(b: Breakdown, console: Console) -> None:
    i = b.identity
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    table.add_row("kernel", Text(_clean(i.release)))
    table.add_row("cmdline", Text(_clean(i.cmdline, 200)))
    table.add_row("cpus", "-" if i.cpus is None else str(i.cpus))
    table.add_row("arch", Text(_clean(i.arch)))
    table.add_row("memory", "-" if i.memory_kb is None else f"{i.memory_kb / 1024:.0f} MiB")
    table.add_row("lines", f"{b.line_count} ({b.timed_line_count} timed, {_s(b.first_s)}..{_s(b.last_s)} s)")
    console.print(table)


def _prekernel(b: Breakdown, console: Console) -> None:
    for line in prekernel_lines(b):
        console.print(Text(line))
    if b.bootstage is None:
        return
    source = bootstage_table(b.bootstage)
    table = Table(title=source.title, title_justify="left")
    for column in source.columns:
        table.add_column(column.header, justify="right" if column.right else "left")
    for row in source.rows:
        table.add_row(*(Text(cell) for cell in row))
    console.print(table)


def _metrics(b: Breakdown, console: Console) -> None:
    table = Table(title="Metrics", title_justify="left")
    table.add_column("metric", no_wrap=True)
    table.add_column("value (s)", justify="right", no_wrap=True)
    table.add_column("definition")
    for name, definition in BOOT_LOG_DEFINITIONS.items():
        value = getattr(b.metrics, name, None)
        if value is None and name in PREKERNEL_METRICS:
            continue  # shown only for a log that has them: most never will
        table.add_row(name, _s(value) if value is not None else "not in this log", definition)
    console.print(table)


def _phases(b: Breakdown, console: Console) -> None:
    table = Table(title="Phases", title_justify="left")
    for column, justify in (("phase", "left"), ("start s", "right"), ("end s", "right")):
        table.add_column(column, justify=justify, no_wrap=column != "phase")  # type: ignore[arg-type]
    table.add_column("duration s", justify="right", no_wrap=True)
    table.add_column("share", justify="right", no_wrap=True)
    table.add_column("")
    for p in b.phases:
        if p.missing or p.duration_s is None:
            table.add_row(p.name, _s(p.start_s), _s(p.end_s), "missing", "", Text(_clean(p.missing)))
            continue
        share = "-" if p.share is None else f"{p.share:.0%}"
        table.add_row(p.name, _s(p.start_s), _s(p.end_s), _s(p.duration_s), share, _bar(p.share or 0.0))
    console.print(table)


def _gaps(b: Breakdown, console: Console) -> None:
    if not b.gaps:
        return
    span = (b.last_s or 0.0) - (b.first_s or 0.0)
    biggest = b.gaps[0]
    share = f", {biggest.duration_s / span:.0%} of {span:.3f} s" if span > 0 else ""
    biggest_text = f"Biggest: after {_clean(biggest.before)} {biggest.duration_s:.3f} s{share}"
    console.print(Text(biggest_text, style="bold"))
    table = Table(title="Largest gaps between timed lines", title_justify="left")
    table.add_column("at s", justify="right", no_wrap=True)
    table.add_column("gap s", justify="right", no_wrap=True)
    table.add_column("")
    # Named by the line that opened the gap, as everywhere else; the line that ended it (often the
    # kernel's "done" message, e.g. "initcall X returned") is shown under it.
    table.add_column("line before the gap / the line that ended it")
    for g in b.gaps:
        bar = _bar(g.duration_s / span) if span > 0 else ""
        table.add_row(
            f"{g.start_s:.3f}",
            f"{g.duration_s:.3f}",
            bar,
            Text(f"{_clean(g.before)}\n  ended by: {_clean(g.after)}"),
        )
    console.print(table)


def _initcalls(b: Breakdown, console: Console, top_n: int) -> None:
    calls = b.initcalls
    if not calls.count:
        console.print("Initcalls: none logged (boot with initcall_debug to see them)")
        return
    table = Table(
        title=(
            f"Initcalls: {calls.count}, {calls.total_s:.3f} s in total, {len(calls.failed)} failed,"
            f" {len(calls.unfinished)} never returned"
        ),
        title_justify="left",
    )
    table.add_column("initcall", overflow="fold")
    table.add_column("start s", justify="right", no_wrap=True)
    table.add_column("duration ms", justify="right", no_wrap=True)
    table.add_column("ret", justify="right", no_wrap=True)
    for name, *cells in initcall_cells(calls, top_n):
        table.add_row(Text(name), *cells)
    console.print(table)
    for line in unfinished_lines(calls, top_n):
        console.print(Text(line))


def _cpus(b: Breakdown, console: Console) -> None:
    bring = b.cpu_bringup
    if not bring.cpus and bring.serial_s is None:
        return
    if not bring.cpus:  # "smp: Brought up 1 node, 1 CPU": nothing was brought up, nothing to draw
        console.print(Text(f"CPU bring-up: no secondary CPUs ({_s(bring.serial_s)} s)"))
        return
    table = Table(
        title=(
            f"CPU bring-up: serial {_s(bring.serial_s)} s, if parallel (slowest CPU)"
            f" {_s(bring.parallel_estimate_s)} s"
        ),
        title_justify="left",
    )
    table.add_column("cpu", justify="right", no_wrap=True)
    table.add_column("start s", justify="right", no_wrap=True)
    table.add_column("duration s", justify="right", no_wrap=True)
    table.add_column("phases (cycles)")
    for c in bring.cpus:
        phases = ", ".join(str(n) for n in c.phases_cycles)
        if c.total_cycles:
            phases += f" ({c.total_cycles})"
        table.add_row(str(c.cpu), _s(c.start_s), _s(c.duration_s), phases)
    console.print(table)


def _advice(b: Breakdown, console: Console) -> None:
    if not b.advice:
        return
    console.print(Text("Advice", style="bold"))
    for a in b.advice:
        cost = "" if a.cost_s is None else f" (~{a.cost_s:.3f} s)"
        console.print(Text(f"• {_clean(a.title, 200)}{cost}", style="bold"))
        console.print(Text(f"    seen: {_clean(a.evidence, 300)}"))
        console.print(Text(f"    try:  {_clean(a.remedy, 300)}"))

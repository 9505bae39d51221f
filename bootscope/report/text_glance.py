"""One boot at a glance (``bootscope analyze LOG``): a summary line in the spirit of
``systemd-analyze time``, then only what the log has, in 80 columns.

What the log lacks is named once, on one line, not listed row by row; ``--verbose`` shows the full
view (:mod:`bootscope.report.text`). This view is plain text on a :class:`Screen`, without rich
(start-up: see bootscope/report/text_table.py); log text goes through :func:`clean`.
"""

from __future__ import annotations

from bootscope.model import Breakdown, Panic
from bootscope.report.screen import Screen
from bootscope.report.text_cells import bar, clean, initcall_cells, phase_at, seconds, unfinished_lines
from bootscope.report.text_prekernel import bootstage_table, prekernel_lines
from bootscope.report.text_table import Column, TextTable

# The kernel phases named in the summary line, in boot order; "userspace" is said after the ';'.
_KERNEL_PHASES = ("setup", "mm_init", "smp_bringup", "post_smp", "initcalls", "free_init")
GAP_TEXT = 120  # a gap's line is cut to the column's width anyway; this bounds the work
GLANCE_BAR_WIDTH = 12
MIN_BAR_WIDTH = 4
# the phase table's other columns ("smp_bringup", "12.345" x 3, "100%") and its 6 borders with padding
_PHASE_FIXED_COLUMNS = 11 + 7 + 7 + 10 + 5 + 3 * 6 + 1


def summary_line(b: Breakdown) -> str:
    """Return one line (plain text, log text cleaned) saying how long the kernel took to reach
    ``Run /init``, split into the phases the log times, and how long userspace took to the marker."""
    phases = {p.name: p for p in b.phases if p.duration_s is not None and not p.missing}
    kernel_s = b.metrics.kernel_init_s
    end = "Run /init" if "run_init" in b.milestones else "'Freeing unused kernel memory'"
    if kernel_s is None:
        span = f"{seconds(b.first_s)}..{seconds(b.last_s)}"
        kernel = f"kernel: no 'Run /init' line; the log's timed lines span {span} s"
    else:
        parts = [f"{name} {phases[name].duration_s:.3f}" for name in _KERNEL_PHASES if name in phases]
        split = f" ({', '.join(parts)})" if parts else ""
        kernel = f"kernel {kernel_s:.3f} s to {end}{split}"
    userspace_s = b.metrics.userspace_s
    if userspace_s is not None and kernel_s is not None:
        user = f"userspace {userspace_s - kernel_s:.3f} s to the marker (at {userspace_s:.3f} s)"
    elif userspace_s is not None:
        user = f"userspace marker at {userspace_s:.3f} s"
    elif b.metrics.systemd_userspace_s is not None or b.metrics.initrd_s is not None or b.systemd_stated:
        user = _systemd_part(b)
    elif kernel_s is not None and b.last_s is not None:
        user = f"userspace: no marker line; the log ends {max(0.0, b.last_s - kernel_s):.3f} s after {end}"
    else:
        user = ""
    host = (
        "" if b.metrics.host_wall_s is None else f"; host wall {b.metrics.host_wall_s:.3f} s from QEMU start"
    )
    return kernel + (f"; {user}" if user else "") + host


def _systemd_part(b: Breakdown) -> str:
    """The userspace half of the summary for a log with systemd's lines: the initramfs, then systemd
    from its start to "Startup finished" (printk clock)."""
    parts = []
    if b.metrics.initrd_s is not None:
        parts.append(f"initrd {b.metrics.initrd_s:.3f} s")
    if b.metrics.systemd_userspace_s is not None:
        parts.append(f"systemd {b.metrics.systemd_userspace_s:.3f} s to Startup finished")
    elif b.systemd_stated is None:
        parts.append("systemd: no 'Startup finished' line")
    else:
        parts.append("systemd: no start line in this log")
    return "userspace: " + ", ".join(parts) + _stated(b)


def _stated(b: Breakdown) -> str:
    """systemd's own figures from its "Startup finished" line, exact where the stamps are coarse:
    " (systemd's own: 6.386 s (kernel) + 19.718 s (userspace) = 26.105 s)"; empty without one."""
    t = b.systemd_stated
    if t is None or not t.finished:
        return ""
    named = (
        ("firmware", t.firmware_s),
        ("loader", t.loader_s),
        ("kernel", t.kernel_s),
        ("initrd", t.initrd_s),
        ("userspace", t.userspace_s),
    )
    parts = [f"{value:.3f} s ({name})" for name, value in named if value is not None]
    total = "" if t.total_s is None else f" = {t.total_s:.3f} s"
    return f" (systemd's own: {' + '.join(parts)}{total})" if parts else ""


def panic_line(panic: Panic) -> str:
    """One line for a boot that panicked: "the kernel panicked at 3.517 s: VFS: Unable to mount ..."."""
    when = "" if panic.t_s is None else f" at {panic.t_s:.3f} s"
    return f"the kernel panicked{when}: {panic.reason or '(no reason given)'}"


def render_glance(b: Breakdown, screen: Screen, top_n: int) -> None:
    """Write the compact view of one boot to ``screen`` (times in s): the summary line, the panic if
    any, then only the sections the log has; returns None."""
    screen.line(summary_line(b), style="bold")
    if b.panic is not None:
        screen.line(panic_line(b.panic), style="alarm")
    _identity(b, screen)
    _prekernel(b, screen, top_n)
    _metrics(b, screen)
    _phases(b, screen)
    _gaps(b, screen, top_n)
    _initcalls(b, screen, top_n)
    _cpus(b, screen)
    _advice(b, screen)


def _identity(b: Breakdown, screen: Screen) -> None:
    i = b.identity
    table = TextTable((Column(bold=True), Column(fold=True)), boxed=False, gap=2)
    shown = {
        "kernel": None if i.release is None else clean(i.release),
        "cmdline": None if i.cmdline is None else clean(i.cmdline, 200),
        "cpus": None if i.cpus is None else str(i.cpus),
        "arch": None if i.arch is None else clean(i.arch),
        "memory": None if i.memory_kb is None else f"{i.memory_kb / 1024:.0f} MiB",
    }
    for label, value in shown.items():
        if value is not None:
            table.add_row(label, value)
    table.add_row(
        "lines", f"{b.line_count} ({b.timed_line_count} timed, {seconds(b.first_s)}..{seconds(b.last_s)} s)"
    )
    screen.table(table)
    absent = [label for label, value in shown.items() if value is None]
    if absent:
        screen.line(f"not in this log: {', '.join(absent)}")


def _prekernel(b: Breakdown, screen: Screen, top_n: int) -> None:
    for line in prekernel_lines(b):
        screen.line(line)
    if b.bootstage is not None:
        screen.table(bootstage_table(b.bootstage, limit=top_n))


def _metrics(b: Breakdown, screen: Screen) -> None:
    from bootscope.metrics import BOOT_LOG_DEFINITIONS, PREKERNEL_METRICS

    present = [(name, getattr(b.metrics, name, None)) for name in BOOT_LOG_DEFINITIONS]
    table = TextTable((Column("metric"), Column("value s", right=True)), title="Metrics (s)")
    for name, value in present:
        if value is not None:
            table.add_row(name, seconds(value))
    if table.rows:
        screen.table(table)
    absent = [name for name, value in present if value is None and name not in PREKERNEL_METRICS]
    if absent:
        screen.line(f"metrics not in this log: {', '.join(absent)} (--verbose: definitions)")


def _phases(b: Breakdown, screen: Screen) -> None:
    measured = [p for p in b.phases if p.duration_s is not None and not p.missing]
    if measured:
        # the bar is what a narrow screen gives up first: shorter, then none
        bar_width = min(GLANCE_BAR_WIDTH, screen.width_cells - _PHASE_FIXED_COLUMNS)
        with_bar = bar_width >= MIN_BAR_WIDTH
        columns = (
            Column("phase"),
            *(Column(name, right=True) for name in ("start s", "end s", "duration s", "share")),
            *((Column(""),) if with_bar else ()),
        )
        table = TextTable(columns, title="Phases")
        for p in measured:
            share = "-" if p.share is None else f"{p.share:.0%}"
            cells = (p.name, seconds(p.start_s), seconds(p.end_s), seconds(p.duration_s), share)
            table.add_row(*cells, *((bar(p.share or 0.0, bar_width),) if with_bar else ()))
        screen.table(table)
    missing = [p for p in b.phases if p not in measured]
    if missing and not measured:
        screen.line("phases: none timed, the log has no milestone line (--verbose: which lines)")
    elif missing:
        # One missing milestone line leaves two phases untimed: say each missing line once.
        lines = dict.fromkeys(clean(p.missing or "no duration") for p in missing)
        names = ", ".join(p.name for p in missing)
        screen.line(f"phases not timed: {names} ({'; '.join(lines)})")


def _gaps(b: Breakdown, screen: Screen, top_n: int) -> None:
    if not b.gaps:
        return
    span_s = (b.last_s or 0.0) - (b.first_s or 0.0)
    # A gap is named by the line that opened it, as in diff, plot, the HTML page and the trace (one name
    # for one gap everywhere); --verbose shows the line that ended it too.
    # One row per gap: the line (the widest column) is cut, not wrapped, to what the others leave.
    columns = (
        Column("at s", right=True),
        Column("gap s", right=True),
        Column("share", right=True),
        Column("phase"),
        Column("line before the gap"),
    )
    table = TextTable(columns, title="Largest gaps between timed lines")
    for g in b.gaps[:top_n]:
        share = f"{g.duration_s / span_s:.0%}" if span_s > 0 else "-"
        table.add_row(
            f"{g.start_s:.3f}",
            f"{g.duration_s:.3f}",
            share,
            phase_at(b, g.start_s),
            clean(g.before, GAP_TEXT),
        )
    screen.table(table)


def _initcalls(b: Breakdown, screen: Screen, top_n: int) -> None:
    calls = b.initcalls
    if not calls.count:
        screen.line("initcalls: none logged (boot with initcall_debug to see them)")
        return
    screen.line(
        f"Initcalls: {calls.count}, {calls.total_s:.3f} s in total, {len(calls.failed)} failed,"
        f" {len(calls.unfinished)} never returned"
    )
    numbers = (Column(name, right=True) for name in ("start s", "duration ms", "ret"))
    table = TextTable((Column("initcall"), *numbers))
    for row in initcall_cells(calls, top_n):
        table.add_row(*row)
    screen.table(table)
    for text in unfinished_lines(calls, top_n):
        screen.line(text)


def _cpus(b: Breakdown, screen: Screen) -> None:
    bring = b.cpu_bringup
    if not bring.cpus and bring.serial_s is None:
        return
    timed = [c for c in bring.cpus if c.duration_s is not None]
    count = b.identity.cpus if b.identity.cpus is not None else len(bring.cpus) + 1
    took = "" if bring.serial_s is None else f" in {bring.serial_s:.3f} s"
    if not bring.cpus:  # "smp: Brought up 1 node, 1 CPU": nothing was brought up, nothing to draw
        screen.line(f"CPU bring-up: no secondary CPUs{took}")
        return
    if not timed:
        cycles = " (cycle counts: --verbose)" if any(c.phases_cycles for c in bring.cpus) else ""
        screen.line(f"{count} CPUs brought up{took}; per-CPU times not in this log{cycles}")
        return
    parallel = seconds(bring.parallel_estimate_s)
    screen.line(f"CPU bring-up: {count} CPUs{took}, if parallel (slowest CPU) {parallel} s")
    table = TextTable(tuple(Column(name, right=True) for name in ("cpu", "start s", "duration s")))
    for c in bring.cpus:
        table.add_row(str(c.cpu), seconds(c.start_s), seconds(c.duration_s))
    screen.table(table)


def _advice(b: Breakdown, screen: Screen) -> None:
    if not b.advice:
        return
    screen.line("Advice", style="bold")
    # A grid keeps the wrapped continuation lines indented under their label.
    table = TextTable((Column(), Column(fold=True)), boxed=False, gap=1)
    for a in b.advice:
        cost = "" if a.cost_s is None else f" (~{a.cost_s:.3f} s)"
        table.add_row("•", f"{clean(a.title, 200)}{cost}", bold=True)
        table.add_row("", f"seen: {clean(a.evidence, 300)}")
        table.add_row("", f"try:  {clean(a.remedy, 300)}")
    screen.table(table)

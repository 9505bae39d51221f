"""What one boot shows before the kernel's own clock, for the terminal views: the boot loader's
bootstage report (one line, then its marks as a table) and the kernel's early cycle-counter lines
(one line). Stage names come from the log: they are cleaned like every log string."""

from __future__ import annotations

from bootscope.model import Breakdown
from bootscope.prekernel import BAREBOX, KERNEL_STAGE, BootstageReport
from bootscope.report.text_cells import clean
from bootscope.report.text_table import Column, TextTable


def prekernel_lines(b: Breakdown) -> list[str]:
    """Return one line for the boot loader's report and one for the early counter, each only when
    the boot shows it."""
    lines = [] if b.bootstage is None else [bootstage_line(b.bootstage)]
    early = b.early_counter
    if early is not None:
        lines.append(
            f"early counter: the kernel's first line at {early.kernel_start_s:.6f} s from the counter's"
            f" start (about power-on); {early.lines} lines stamped on it,"
            f" {early.before_timekeeping_s * 1e3:.3f} ms before timekeeping restarted the clock at"
            f" {early.restart_s:.6f} s"
        )
    return lines


def bootstage_line(report: BootstageReport) -> str:
    """One line for a bootstage report: its marks and the time from reset to the kernel's start."""
    backwards = "; marks go backwards (a timer that wrapped or restarted)" if report.went_backwards else ""
    if report.loader == BAREBOX:
        return (
            f"boot loader: barebox's log (dmesg -t), {len(report.stages)} messages, the last at"
            f" {report.handoff_s:.6f} s on barebox's clock" + backwards
        )
    last = next((stage for stage in report.stages if stage.name == KERNEL_STAGE), None)
    named = f"{KERNEL_STAGE} at" if last is not None else "its last mark at"
    return (
        f"boot loader: U-Boot bootstage report, {len(report.stages)} marks, {named}"
        f" {report.handoff_s:.6f} s from reset (U-Boot's timer)" + backwards
    )


def bootstage_lines(report: BootstageReport, limit: int) -> list[str]:
    """The report as plain lines (its line, then the ``limit`` longest marks), for a log without
    kernel stamps."""
    rows = bootstage_table(report, limit).rows
    return [bootstage_line(report)] + [f"  {mark:>14}  {elapsed:>10}  {name}" for name, mark, elapsed in rows]


def bootstage_table(report: BootstageReport, limit: int | None = None) -> TextTable:
    """Return the report's marks (from reset and elapsed, s) and accumulated times as a table; with
    ``limit``, only the ``limit`` marks with the longest elapsed times, still in the report's order."""
    stages = list(report.stages)
    barebox = report.loader == BAREBOX
    title = "Boot loader (barebox's log)" if barebox else "Boot loader (U-Boot bootstage)"
    if limit is not None and len(stages) > limit:
        longest = sorted(range(len(stages)), key=lambda i: -(stages[i].elapsed_s or 0.0))[:limit]
        stages = [stages[i] for i in sorted(longest)]
        title += f": the {limit} longest of {len(report.stages)} marks (--verbose: all)"
    table = TextTable(
        (
            Column("barebox message" if barebox else "U-Boot stage", fold=True),
            Column("on its clock s" if barebox else "from reset s", right=True),
            Column("elapsed s", right=True),
        ),
        title=title,
    )
    for stage in stages:
        elapsed = "-" if stage.elapsed_s is None else _us(stage.elapsed_s)
        table.add_row(clean(stage.name) or "(no name)", _us(stage.mark_s), elapsed)
    for name, total_s in report.accumulated:
        table.add_row(f"{clean(name)} (accumulated)", "", _us(total_s))
    return table


def _us(value_s: float) -> str:
    """U-Boot counts microseconds: seconds with all six decimals."""
    return f"{value_s:.6f}"

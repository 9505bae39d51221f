"""The HTML report's tables: plain markup built on the host, every value passed through ``escape``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from bootscope.metrics import HEADLINE_METRICS, KERNEL_INIT_S, USERSPACE_S
from bootscope.model import Breakdown, Comparison
from bootscope.report.views import DeltaRow, format_duration
from bootscope.usecases.view_types import BootView


def _e(value: object) -> str:
    from html import escape

    return escape("" if value is None else str(value), quote=True)


def _s(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _table(
    caption: str, head: Sequence[str], rows: Iterable[Sequence[object]], klass: str = "", note: str = ""
) -> str:
    cls = f' class="{_e(klass)}"' if klass else ""
    out = [f"<section><h2>{_e(caption)}</h2><table{cls}><thead><tr>"]
    out += [f"<th>{_e(h)}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    count = 0
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row) + "</tr>")
        count += 1
    if count == 0:
        out.append(f'<tr><td colspan="{len(head)}" class="none">none</td></tr>')
    out.append("</tbody></table>")
    if note:
        out.append(f'<p class="hint">{_e(note)}</p>')
    out.append("</section>")
    return "".join(out)


def section_table(caption: str, head: Sequence[str], rows: Iterable[Sequence[object]], note: str = "") -> str:
    """Return a report section: heading ``caption``, a table of ``rows`` under ``head`` (every cell
    escaped; 'none' for no row) and a hint line ``note``."""
    return _table(caption, head, rows, note=note)


def identity_table(bd: Breakdown) -> str:
    """Return the kernel and machine the log names, as an HTML section."""
    ident = bd.identity
    rows = [
        ("kernel release", ident.release or "not in log"),
        ("command line", ident.cmdline or "not in log"),
        ("CPUs", ident.cpus if ident.cpus is not None else "not in log"),
        ("architecture", ident.arch or "not in log"),
        ("lines (timed)", f"{bd.line_count} ({bd.timed_line_count})"),
    ]
    rows += [("warning", w) for w in bd.warnings]
    return _table("Boot", ("", ""), rows, "kv")


def metrics_table(bd: Breakdown) -> str:
    """Return the boot's headline metrics in seconds, as an HTML section."""
    m = bd.metrics
    rows = [(name, _s(getattr(m, name))) for name in HEADLINE_METRICS]
    return _table("Metrics (seconds)", ("metric", "value"), rows, "kv")


def phases_table(bd: Breakdown) -> str:
    """Return the boot's phases with start, duration (s) and share, as an HTML section."""
    rows = [
        (
            p.name,
            _s(p.start_s),
            _s(p.duration_s),
            "–" if p.share is None else f"{100 * p.share:.1f} %",
            p.missing or "",
        )
        for p in bd.phases
    ]
    return _table("Phases", ("phase", "start (s)", "duration (s)", "share", "note"), rows)


def initcalls_table(bd: Breakdown) -> str:
    """Return the slowest initcalls (the breakdown's top list), as an HTML section."""
    rows = [
        (c.name, _s(c.start_s, 6), "–" if c.duration_us is None else f"{c.duration_us:,}", c.ret, c.pid)
        for c in bd.initcalls.top
    ]
    caption = f"Slowest initcalls ({bd.initcalls.count} in all, {bd.initcalls.total_s:.3f} s)"
    return _table(caption, ("initcall", "start (s)", "duration (us)", "ret", "pid"), rows)


def advice_list(bd: Breakdown) -> str:
    """Return the known boot-time sinks seen in this boot with their remedies ('' when none)."""
    if not bd.advice:
        return ""
    rows = [(a.title, a.evidence, _s(a.cost_s), a.remedy) for a in bd.advice]
    return _table("Advice", ("sink", "evidence", "cost (s)", "remedy"), rows)


def delta_table(a_label: str, b_label: str, rows: Sequence[DeltaRow]) -> str:
    """Return phases and initcalls of two boots side by side with b minus a, as an HTML section."""
    body = [
        (
            r.kind,
            r.name,
            _s(r.a_s, 6),
            _s(r.b_s, 6),
            "–" if r.delta_s is None else f"{r.delta_s:+.6f}",
        )
        for r in rows
    ]
    head = ("kind", "name", f"{a_label} (s)", f"{b_label} (s)", "change (s)")
    return _table(f"{a_label} vs {b_label}", head, body) + '<div id="deltas" class="chart"></div>'


def boots_table(views: Sequence[BootView]) -> str:
    """Return one row per boot of the input with its headline metrics (s), as an HTML section."""
    rows = [
        (
            v.label,
            _s(v.breakdown.metrics.kernel_init_s),
            _s(v.breakdown.metrics.userspace_s),
            v.breakdown.line_count,
        )
        for v in views
    ]
    return _table("Boots in the input", ("boot", KERNEL_INIT_S, USERSPACE_S, "lines"), rows)


def definitions_list(definitions: Mapping[str, str]) -> str:
    """Return the metric definitions as an HTML section ('' when none are given)."""
    if not definitions:
        return ""
    items = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in definitions.items())
    return f'<section><h2>Metric definitions</h2><dl class="defs">{items}</dl></section>'


def environment_table(environment: Sequence[tuple[str, str]]) -> str:
    """Return the run's environment (host, QEMU command line, accelerator, kernels) as a section."""
    return _table("Environment", ("", ""), environment, "kv")


def _ci(ci: tuple[float, float] | None, digits: int = 3) -> str:
    return "" if ci is None else f" [{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def comparison_table(comparisons: Sequence[Comparison]) -> str:
    """Return the compare stage's results, one row per metric and pair of variants, as a section;
    where p was adjusted for multiple comparisons (Holm), the column and a note under it say so."""
    adjusted = [c for c in comparisons if c.p_adjusted is not None]
    rows = []
    for c in comparisons:
        p = c.p_adjusted if c.p_adjusted is not None else (c.tests[0].p if c.tests else None)
        rel = "" if c.shift_relative is None else f" ({100 * c.shift_relative:+.1f} %)"
        rows.append(
            (
                c.metric,
                f"{c.a.name} (n={c.a.n})",
                f"{c.a.median:.3f}{_ci(c.a.median_ci)}",
                f"{c.b.name} (n={c.b.n})",
                f"{c.b.median:.3f}{_ci(c.b.median_ci)}",
                ("–" if c.shift_estimate is None else f"{c.shift_estimate:+.3f}") + _ci(c.shift_ci) + rel,
                ("–" if p is None else f"{p:.3g}") + (" *" if c.p_adjusted is not None else ""),
                c.verdict,
            )
        )
    head = ("metric", "A", "A median [CI]", "B", "B median [CI]", "B − A [CI]", "p", "verdict")
    note = ""
    if adjusted:
        how = "; ".join(dict.fromkeys(c.correction for c in adjusted if c.correction)) or "Holm correction"
        note = (
            f"* p adjusted for multiple comparisons ({how}, for each metric the variants compared "
            "with A): the verdicts follow the adjusted p, never smaller than the test's own."
        )
    return _table("Comparison", head, rows, note=note)


def failures_table(failures: Sequence[object]) -> str:
    """Return the boots that failed, with their outcome and reason, as an HTML section."""
    rows = [
        (
            getattr(f, "variant", ""),
            getattr(f, "index", ""),
            getattr(f, "outcome", ""),
            getattr(f, "reason", ""),
        )
        for f in failures
    ]
    return _table("Failed boots", ("variant", "boot", "outcome", "reason"), rows)


__all__ = ["format_duration"]

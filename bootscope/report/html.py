"""One self-contained, offline HTML report of a boot or of a stored run.

The page carries its data as JSON inside ``<script type="application/json">`` (``<``, ``>``, ``&``
and every non-ASCII character escaped, so no log text can close the block or become markup), the
vendored Plotly bundle (read from the installed ``plotly`` package, never a CDN) and
``assets/report.js``, which draws the charts and fills the log view with ``textContent`` only.
Tables that need no script are rendered here, every value passed through ``html.escape``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import fields
from functools import lru_cache
from html import escape
from importlib import resources
from typing import TYPE_CHECKING, Any

from bootscope.report import html_tables as tables
from bootscope.report.diff_out import total_sentence, waterfall_svg
from bootscope.report.views import (
    delta_rows,
    drawable_initcalls,
    drawable_units,
    gap_sentence,
    initcall_lane,
    line_gaps,
)
from bootscope.usecases.view_types import BootView, RunView

if TYPE_CHECKING:
    from bootscope.usecases.tune.stored import StoredTune

# Bars beyond this many in the gap chart are narrower than a pixel on any screen; the page stays fast.
MAX_GAP_BARS = 2000
# Plotly draws each bar as an SVG element; past a few thousand the page takes tens of seconds to
# open (41 074 initcall bars: 45 s in headless chromium), so only the longest are drawn.
MAX_INITCALL_BARS = 3000
# One lane per unit, as `systemd-analyze plot` draws them; a system with more units keeps the
# longest-activating ones (a Debian image has about 80 started units, a desktop a few hundred).
MAX_UNIT_LANES = 400


@lru_cache(maxsize=8)
def _asset(name: str) -> str:
    return resources.files("bootscope.report").joinpath("assets", name).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def plotly_js() -> str:
    """Return the text of the installed Plotly bundle (``plotly/package_data/plotly.min.js``).

    Raises FileNotFoundError if the ``plotly`` package is installed without its bundle.
    """
    text = resources.files("plotly").joinpath("package_data", "plotly.min.js").read_text(encoding="utf-8")
    # Inside <script> only "</script" (any case) could end the element early; neutralise it.
    return re.sub(r"</(script)", r"<\\/\1", text, flags=re.IGNORECASE)


def json_for_script(data: Any) -> str:
    """Return ``data`` as JSON that is safe inside an HTML ``<script>`` element.

    ``<``, ``>`` and ``&`` become ``\\u003c``-style escapes (nothing can close the element or open a
    comment), and every non-ASCII character, U+2028/U+2029 included, is escaped.
    """
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _finite(value: float | None) -> float | None:
    if value is None or value != value or value in (float("inf"), float("-inf")):
        return None
    return value


def _initcall_line_index(view: BootView) -> dict[str, int]:
    # "initcall %pS returned %d after %lld usecs" (init/main.c, do_trace_initcall_finish)
    index: dict[str, int] = {}
    for number, line in enumerate(view.lines):
        text = line.text.strip()
        if text.startswith("initcall ") and " returned " in text:
            symbol = text.split()[1]
            index.setdefault(symbol, number)
            index.setdefault(symbol.split("+", 1)[0], number)
    return index


def boot_data(view: BootView) -> dict[str, Any]:
    """Return the JSON-ready data of one boot that ``report.js`` draws (times in seconds)."""
    bd = view.breakdown
    where = _initcall_line_index(view)
    every_call = drawable_initcalls(bd)
    calls = every_call
    if len(calls) > MAX_INITCALL_BARS:
        longest = sorted(calls, key=lambda c: c.duration_us or 0, reverse=True)[:MAX_INITCALL_BARS]
        keep = {id(c) for c in longest}
        calls = tuple(c for c in every_call if id(c) in keep)
    lanes = sorted({initcall_lane(c) for c in calls}, key=lambda n: (n.startswith("async"), len(n), n))
    gaps = line_gaps(view.lines)
    top_gaps = sorted(gaps, key=lambda g: g.duration_s, reverse=True)[:MAX_GAP_BARS]
    top_gaps.sort(key=lambda g: g.start_s)
    return {
        "label": view.label,
        "first_s": _finite(bd.first_s),
        "last_s": _finite(bd.last_s),
        "phases": [
            [p.name, p.start_s, p.end_s, p.share]
            for p in bd.phases
            if p.start_s is not None and p.end_s is not None
        ],
        "lanes": lanes,
        "initcalls": [
            [
                c.name,
                c.start_s,
                c.duration_us,
                c.ret,
                initcall_lane(c),
                where.get(c.name, where.get(c.name.split("+", 1)[0], -1)),
            ]
            for c in calls
        ],
        "initcalls_all": len(every_call),
        "cpus": [
            [c.cpu, c.start_s, c.duration_s]
            for c in bd.cpu_bringup.cpus
            if c.start_s is not None and c.duration_s is not None
        ],
        "gaps": [[g.start_s, g.duration_s, g.before, g.after] for g in bd.gaps],
        "milestones": sorted(([name, t] for name, t in bd.milestones.items()), key=lambda m: m[1]),
        "gapbars": {
            "t": [g.start_s for g in top_gaps],
            "d": [g.duration_s for g in top_gaps],
            "i": [g.index for g in top_gaps],
            "shown": len(top_gaps),
            "all": len(gaps),
        },
        "lines": {"t": [line.guest_s for line in view.lines], "x": [line.text for line in view.lines]},
        "units": unit_rows(view),
        "units_all": len(drawable_units(view.units)),
    }


def unit_rows(view: BootView) -> list[list[Any]]:
    """Return the unit lanes' rows, ``[unit, start s, active s or None]`` in start order (systemd's
    monotonic seconds, the kernel's printk clock): at most MAX_UNIT_LANES, the longest-activating."""
    units = drawable_units(view.units)
    if len(units) > MAX_UNIT_LANES:
        keep = set(sorted(units, key=lambda u: u.activation_s or 0.0, reverse=True)[:MAX_UNIT_LANES])
        units = tuple(u for u in units if u in keep)
    return [[u.unit, u.start_s, u.ready_s] for u in units]


def _boot_metric_names(views: Sequence[BootView]) -> set[str]:
    """Return the names of the metrics that at least one of ``views`` has a value for."""
    return {
        name
        for view in views
        for name in _field_names(view.breakdown.metrics)
        if getattr(view.breakdown.metrics, name, None) is not None
    }


def _field_names(metrics: object) -> tuple[str, ...]:
    return tuple(field.name for field in fields(metrics))  # type: ignore[arg-type]


def _present(definitions: Mapping[str, str] | None, names: set[str]) -> dict[str, str]:
    """Return the definitions of the metrics in ``names`` only, in the definitions' order: the
    report explains what it shows, not every metric bootscope knows."""
    return {name: text for name, text in (definitions or {}).items() if name in names}


def _page(title: str, body: str, data: Mapping[str, Any], served: str | None = None) -> str:
    if served is not None:
        # Served by `bootscope serve`: the style and scripts are files of its own (cached by the
        # browser, allowed by its Content-Security-Policy), and its navigation bar comes first.
        head = (
            '<link rel="stylesheet" href="/static/report.css">\n'
            '<link rel="stylesheet" href="/static/dash.css">'
        )
        scripts = '<script src="/static/plotly.min.js"></script>\n<script src="/static/report.js"></script>\n'
        body = served + body
    else:
        head = f"<style>\n{_asset('report.css')}\n</style>"
        scripts = f"<script>\n{plotly_js()}\n</script>\n<script>\n{_asset('report.js')}\n</script>\n"
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(title)}</title>\n{head}\n</head>\n<body>\n"
        f"{body}\n"
        f'<script type="application/json" id="bootscope-data">{json_for_script(data)}</script>\n'
        f"{scripts}</body>\n</html>\n"
    )


def _boot_sections(view: BootView, anchor: str = "") -> list[str]:
    bd = view.breakdown
    sentence = gap_sentence(bd, view.lines)
    return [
        tables.identity_table(bd),
        tables.metrics_table(bd),
        '<section><h2 id="timeline-title">Timeline</h2>'
        '<p class="hint">Drag to zoom, double-click to reset, hover a bar for its log line. '
        "Shaded: phases; red: the largest silences. A full userspace boot adds one lane per systemd unit "
        "(activating to active, on the same clock).</p>"
        '<div id="timeline" class="chart"></div></section>',
        "<section><h2>Time until the next line</h2>"
        f'<p id="gap-sentence" class="sentence">{escape(sentence)}</p>'
        '<div id="gaps" class="chart"></div></section>',
        tables.phases_table(bd),
        tables.initcalls_table(bd),
        tables.advice_list(bd),
        '<section><h2>Log</h2><div class="log-tools">'
        '<input id="log-search" type="search" placeholder="Search the log (plain text)" autocomplete="off">'
        '<span id="log-count"></span></div><div id="log" class="log" tabindex="0">'
        '<div class="log-spacer"><div class="log-rows"></div></div></div></section>',
    ]


def render_boot_report(
    view: BootView,
    *,
    vs: BootView | None = None,
    others: Sequence[BootView] = (),
    definitions: Mapping[str, str] | None = None,
    title: str = "bootscope report",
    served: str | None = None,
) -> str:
    """Return the HTML text of one boot's report; ``vs`` adds a side-by-side comparison with it.

    ``others`` are further boots of the same input, listed in a table. ``served``: the page is one
    of ``bootscope serve``'s, this HTML (its navigation) first and its assets linked, not inlined.
    Never raises on a well-formed ``BootView``; every string from the log is escaped.
    """
    heading = f"{title}: {view.label}" + (f" vs {vs.label}" if vs else "")
    body = [f"<header><h1>{escape(heading)}</h1></header>", "<main>"]
    body += _boot_sections(view)
    if vs is not None:
        body.append(tables.delta_table(view.label, vs.label, delta_rows(view.breakdown, vs.breakdown)))
    if others:
        body.append(tables.boots_table([view, *others]))
    shown = _boot_metric_names([view, *([vs] if vs else []), *others])
    body.append(tables.definitions_list(_present(definitions, shown)))
    body.append("</main>")
    data: dict[str, Any] = {"kind": "boot", "boot": boot_data(view), "deltas": None, "run": None}
    if vs is not None:
        rows = [r for r in delta_rows(view.breakdown, vs.breakdown) if r.delta_s is not None]
        data["deltas"] = {
            "a": view.label,
            "b": vs.label,
            "rows": [[r.kind, r.name, r.a_s, r.b_s] for r in rows],
        }
    return _page(heading, "\n".join(body), data, served)


def run_data(run: RunView) -> dict[str, Any]:
    """Return the JSON-ready data of a run: per metric, per variant, ``[boot index, value]`` pairs
    of the boots that ended OK, and the median with its interval where the stats stage gave one."""
    per_metric: dict[str, dict[str, list[list[float]]]] = {}
    for metric in run.metrics:
        by_variant: dict[str, list[list[float]]] = {v: [] for v in run.variants}
        for s in run.samples:
            value = _finite(s.metrics.get(metric))
            if value is not None and s.outcome.value == "ok" and not s.warmup:
                by_variant.setdefault(s.variant, []).append([s.index, value])
        per_metric[metric] = by_variant
    medians = {
        metric: {s.name: [s.median, *(s.median_ci or (None, None))] for s in sides}
        for metric, sides in run.summaries.items()
    }
    return {
        "variants": list(run.variants),
        "metrics": list(run.metrics),
        "values": per_metric,
        "medians": medians,
    }


def render_run_report(
    run: RunView,
    *,
    definitions: Mapping[str, str] | None = None,
    served: str | None = None,
    tune: StoredTune | None = None,
) -> str:
    """Return the HTML text of a run's report: distributions, ECDFs, comparisons, failures, environment,
    and the section of the tune the run belongs to (``tune``; None: none).

    When ``run.example`` is set, that boot's timeline, gap chart and log follow. ``served``: as for
    :func:`render_boot_report`. Never raises on a well-formed ``RunView``.
    """
    body = [f"<header><h1>{escape(run.title)}</h1></header>", "<main>"]
    body.append(tables.environment_table(run.environment))
    body.append(tables.comparison_table(run.comparisons))
    if tune is not None:
        from bootscope.report.tune_html import tune_section  # the tune's modules: only for a tune's run

        body.append(tune_section(tune))
    body.append(
        '<section><h2>Distributions</h2><p class="hint">Each dot is one boot; the bar is the median '
        'with its confidence interval. Right: the empirical CDF.</p><div id="dists"></div></section>'
    )
    body.append(tables.failures_table(run.failures))
    for diff in run.diffs:
        body.append(
            f"<section><h2>What moved {escape(diff.metric)}: "
            f"{escape(diff.variant)} vs {escape(diff.baseline)}</h2>"
            f"<p>{escape(total_sentence(diff))}</p>{waterfall_svg(diff)}"
            f'<p class="hint">{escape(diff.attribution.correction)}; each bar is one component\'s shift '
            "(red slower, blue faster), largest first; the last grey bar is the total's shift; a black "
            "whisker spans a shift's confidence interval, drawn from where its bar starts.</p></section>"
        )
    data: dict[str, Any] = {"kind": "run", "boot": None, "deltas": None, "run": run_data(run)}
    if run.example is not None:
        body.append(f'<h2 class="example">Example boot: {escape(run.example.label)}</h2>')
        body += _boot_sections(run.example)
        data["boot"] = boot_data(run.example)
    shown = set(run.metrics) | _boot_metric_names([run.example] if run.example else [])
    body.append(tables.definitions_list(_present(definitions, shown)))
    body.append("</main>")
    return _page(run.title, "\n".join(body), data, served)

"""The dashboard's pages (``bootscope serve``) as HTML text: the overview, a series, the alerts and
one alert (with its triage form and bisect command), the runs, a comparison and the fleet.

Every string that comes from a log, a label, a unit or a user passes through ``html.escape`` (text
and attribute alike); a page carries no inline script, so the server's Content-Security-Policy
allows scripts from its own ``/static/`` only. Links use the ids the store gave, never user text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import quote

from bootscope.metrics import unit_of
from bootscope.report.alerts_out import fingerprint_text, moved_text, revisions
from bootscope.report.text_cells import clean
from bootscope.report.web_svg import series_svg, sparkline_svg
from bootscope.store.owner import shown_status
from bootscope.store.records import ExperimentSummary
from bootscope.store.watch import STATES, Alert
from bootscope.usecases.dashboard import Overview, SeriesDetail

NAV = (
    ("/", "Overview"),
    ("/alerts", "Alerts"),
    ("/runs", "Runs"),
    ("/compare", "Compare"),
    ("/fleet", "Fleet"),
)
# Longest text shown in a table cell (a label or a revision can be any length).
CELL_CHARS = 120


def _e(text: object, limit: int = CELL_CHARS) -> str:
    return escape(clean(str(text), limit))


def nav_bar(here: str = "") -> str:
    """Return the navigation bar, the page at ``here`` marked as the current one."""
    links = "".join(
        f'<a href="{href}"{" aria-current=page" if href == here else ""}>{name}</a>' for href, name in NAV
    )
    return f'<nav class="top"><span class="brand">bootscope</span>{links}</nav>\n'


def layout(title: str, body: str, *, here: str = "") -> str:
    """Return a whole page: the navigation bar (``here`` marked), ``title`` and ``body`` (HTML)."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{_e(title)} · bootscope</title>\n"
        '<link rel="stylesheet" href="/static/dash.css">\n'
        '<script src="/static/dash.js" defer></script>\n</head>\n<body>\n'
        f"{nav_bar(here)}<header><h1>{_e(title, 200)}</h1></header>\n"
        f"<main>\n{body}\n</main>\n</body>\n</html>\n"
    )


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, cls: str = "") -> str:
    """Return an HTML table in a scrolling box; ``rows`` hold HTML already escaped by the caller."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return (
        f'<div class="scroll"><table class="{cls}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def section(title: str, inner: str, *, id_: str = "") -> str:
    """Return a titled section (``title`` escaped, ``inner`` HTML)."""
    anchor = f' id="{escape(id_)}"' if id_ else ""
    return f"<section{anchor}><h2>{escape(title)}</h2>{inner}</section>"


def _number(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "s":
        return f"{value * 1000:.1f} ms"
    return f"{value:.4g} {escape(unit)}"


def _alert_rows(alerts: Sequence[Alert]) -> list[list[str]]:
    return [
        [
            f'<a href="/alerts/{a.id}">{a.id}</a>',
            f'<span class="state {escape(a.state)}">{escape(a.state)}</span>',
            f'<span class="kind {escape(a.kind)}">{escape(a.kind)}</span>',
            _e(revisions(a)),
            _e(moved_text(a)),
            _e(a.updated.replace("T", " ")[:16]),
        ]
        for a in alerts
    ]


ALERT_HEADERS = ("id", "state", "kind", "revisions", "moved", "updated (UTC)")
RUN_HEADERS = ("run", "created (UTC)", "status", "variants", "boots ok/failed", "labels")


def _run_rows(runs: Sequence[ExperimentSummary]) -> list[list[str]]:
    return [
        [
            f'<a href="/runs/{r.experiment.id}">{r.experiment.id}</a>',
            _e(r.experiment.created.replace("T", " ")[:16]),
            _e(shown_status(r.experiment)),
            _e(", ".join(v.name for v in r.experiment.variants)),
            f"{r.ok}/{r.failed}",
            _e(" ".join(f"{k}={v}" for k, v in sorted(r.experiment.meta.items()))),
        ]
        for r in runs
    ]


def overview_page(view: Overview) -> str:
    """Return the overview: open alerts first, runs in progress, the page's series grouped by
    fingerprint with sparklines, a pager, and the latest runs."""
    parts = [
        section(
            f"Open alerts ({len(view.open_alerts)})",
            table(ALERT_HEADERS, _alert_rows(view.open_alerts))
            if view.open_alerts
            else '<p class="none">No open alert.</p>',
            id_="open-alerts",
        )
    ]
    if view.running:
        parts.append(section("Runs in progress", table(RUN_HEADERS, _run_rows(view.running)), id_="running"))
    groups = []
    for group in view.groups:
        rows = []
        for line in group.series:
            unit = unit_of(line.metric)
            alerts = " ".join(f'<a href="/alerts/{i}">{i}</a>' for i in line.alert_ids) or "-"
            rows.append(
                [
                    f'<a class="series" href="/series/{quote(line.key)}">{_e(line.metric)}</a>',
                    _e(line.component),
                    str(line.points),
                    _e(line.last_revision or "-", 40),
                    _number(line.last_median, unit),
                    sparkline_svg(line.spark, f"the last {len(line.spark)} medians"),
                    alerts,
                ]
            )
        headers = ("series", "component", "points", "last revision", "last median", "trend", "alerts")
        groups.append(
            f'<div class="group"><h3>{_e(fingerprint_text(group.fingerprint, 400), 400)}</h3>'
            f"{table(headers, rows)}</div>"
        )
    pager = _pager(view.page, view.pages)
    body = (
        "".join(groups)
        or '<p class="none">No series yet: `bootscope watch` builds them from stored runs.</p>'
    )
    parts.append(section(f"Series ({view.series_total}), by fingerprint", body + pager, id_="series"))
    parts.append(section("Latest runs", table(RUN_HEADERS, _run_rows(view.recent)), id_="recent"))
    return layout("Boot time", "".join(parts), here="/")


def _pager(page: int, pages: int) -> str:
    if pages <= 1:
        return ""
    links = []
    if page > 1:
        links.append(f'<a href="/?page={page - 1}">previous</a>')
    links.append(f"page {page} of {pages}")
    if page < pages:
        links.append(f'<a href="/?page={page + 1}">next</a>')
    return f'<p class="pager">{" · ".join(links)}</p>'


def series_page(detail: SeriesDetail) -> str:
    """Return a series: what it is, its chart (points, intervals, alerts; a point opens its run), the
    alerts that name it and its points, newest first."""
    unit = unit_of(detail.metric)
    title = f"{detail.metric} ({detail.component})"
    facts = table(
        ("field", "value"), [[_e(k), _e(v, 400)] for k, v in sorted(detail.fingerprint.items())], cls="kv"
    )
    chart = series_svg(detail.points, detail.alerts, unit)
    marks = [
        [
            f'<a href="/alerts/{m.alert_id}">{m.alert_id}</a>',
            escape(m.kind),
            escape(m.state),
            _e(m.revision, 40),
        ]
        for m in detail.alerts
    ]
    rows = [
        [
            _e(p.revision, 60),
            str(p.boots),
            _number(p.median, unit),
            "-" if p.ci is None else f"{_number(p.ci[0], unit)} to {_number(p.ci[1], unit)}",
            " ".join(f'<a href="/runs/{r}">{r}</a>' for r in p.runs) or "-",
        ]
        for p in reversed(detail.points)
    ]
    body = [
        section(
            f"{len(detail.points)} points",
            f'<p class="hint">Each dot is one revision\'s median over its boots, the whisker its 95% '
            f"interval; a dashed line is an alert's step. Click a dot for its run.</p>{chart}",
            id_="chart",
        ),
    ]
    if marks:
        body.append(section("Alerts", table(("alert", "kind", "state", "step at"), marks)))
    body.append(section("Fingerprint", facts))
    body.append(
        section("Points, newest first", table(("revision", "boots", "median", "95% interval", "runs"), rows))
    )
    return layout(title, "".join(body))


def alerts_page(alerts: Sequence[Alert], state: str | None) -> str:
    """Return the alerts, newest first, with a filter by state."""
    options = "".join(
        f'<option value="{s}"{" selected" if s == state else ""}>{s}</option>' for s in ("", *STATES)
    )
    form = (
        '<form method="get" action="/alerts" class="filter"><label>state <select name="state">'
        f"{options}</select></label> <button>show</button></form>"
    )
    inner = table(ALERT_HEADERS, _alert_rows(alerts)) if alerts else '<p class="none">No alert.</p>'
    return layout("Alerts", section(f"{len(alerts)} alerts", form + inner), here="/alerts")


def _signed(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    return f"{value * 1000:+.1f} ms" if unit == "s" else f"{value:+.4g} {escape(unit)}"


def alert_page(alert: Alert, bisect_command: str) -> str:
    """Return one alert: its range and what moved (each series step with its shift, interval, p and
    jitter ratio), its history, the triage form (which needs the server's token) and the command
    that starts a bisect on its range."""
    facts = table(
        ("field", "value"),
        [
            ["kind", f'<span class="kind {escape(alert.kind)}">{escape(alert.kind)}</span>'],
            [
                "state",
                f'<span class="state {escape(alert.state)}" id="alert-state">{escape(alert.state)}</span>',
            ],
            ["revisions", _e(revisions(alert))],
            ["last good revision", _e(alert.good_revision or "-")],
            ["created / updated (UTC)", _e(f"{alert.created} / {alert.updated}")],
        ],
        cls="kv",
    )
    rows = []
    for item in alert.items:
        unit = unit_of(item.metric)
        ci = "-" if item.ci is None else f"{_signed(item.ci[0], unit)} to {_signed(item.ci[1], unit)}"
        rows.append(
            [
                f'<a href="/series/{quote(item.series)}">{_e(item.metric)}</a>',
                _e(item.component),
                _e(fingerprint_text(item.fingerprint, 200), 200),
                _e(item.revision, 40),
                _signed(item.shift, unit),
                ci,
                "-" if item.p is None else f"{item.p:.2g}",
                "-" if item.jitter_ratio is None else f"{item.jitter_ratio:.1f}x",
            ]
        )
    moved = table(
        ("metric", "component", "machine", "step at", "shift", "95% interval", "p", "x jitter"), rows
    )
    history = table(
        ("when (UTC)", "who", "state", "note"),
        [[_e(e.at), _e(e.by), escape(e.state), _e(e.note, 2000)] for e in alert.events],
    )
    choices = "".join(f'<option value="{s}">{s}</option>' for s in STATES)
    form = (
        f'<form id="triage" data-alert="{alert.id}" class="triage">'
        f'<label>state <select name="state">{choices}</select></label>'
        '<label>note <input name="note" maxlength="2000" autocomplete="off"></label>'
        '<label>who <input name="who" maxlength="128" autocomplete="username"></label>'
        '<label>token <input name="token" type="password" autocomplete="off"></label>'
        '<button type="submit">triage</button><output id="triage-result" role="status"></output></form>'
        '<p class="hint">The token is the one in the file the server was given with --token-file; '
        "it travels in a header, never a cookie.</p>"
    )
    body = [
        section("Range", facts),
        section(f"What moved ({len(alert.items)})", moved),
        section("History", history if alert.events else '<p class="none">Not triaged yet.</p>'),
        section("Triage", form),
        section(
            "Bisect this range", f'<pre class="command" id="bisect-command">{escape(bisect_command)}</pre>'
        ),
    ]
    return layout(f"Alert {alert.id}: {alert.kind}", "".join(body), here="/alerts")


def runs_page(runs: Sequence[ExperimentSummary]) -> str:
    """Return every stored run, newest first."""
    inner = table(RUN_HEADERS, _run_rows(list(reversed(runs)))) if runs else '<p class="none">No run.</p>'
    return layout("Runs", section(f"{len(runs)} runs", inner), here="/runs")


def compare_page(a: str, b: str, metric: str, metrics: Sequence[str], result_html: str, error: str) -> str:
    """Return the comparison form (two ``RUN[:VARIANT]`` and a metric) and, below it, the diff
    (``result_html``, rendered by the diff's own HTML renderer) or the one-line ``error``."""
    options = "".join(
        f'<option value="{escape(m)}"{" selected" if m == metric else ""}>{escape(m)}</option>'
        for m in metrics
    )
    form = (
        '<form method="get" action="/compare" class="filter">'
        f'<label>a <input name="a" value="{escape(a)}" placeholder="RUN:VARIANT" maxlength="80"></label> '
        f'<label>b <input name="b" value="{escape(b)}" placeholder="RUN:VARIANT" maxlength="80"></label> '
        f'<label>metric <select name="metric">{options}</select></label> <button>compare</button></form>'
    )
    parts = [section("Compare two runs or two variants", form)]
    if error:
        parts.append(f'<p class="error" role="alert">{_e(error, 400)}</p>')
    if result_html:
        parts.append(f'<section id="diff">{result_html}</section>')
    return layout("Compare", "".join(parts), here="/compare")


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list) and len(value) == 2:
        return f"{_cell(value[0])} to {_cell(value[1])}" if value[0] is not None else "-"
    return "-" if value is None else _e(value)


def json_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Return ``rows`` (objects of a JSON document) as a table of ``columns``."""
    return table(columns, [[_cell(row.get(c)) for c in columns] for row in rows])


def fleet_page(
    metric: str, by: str, summary: Mapping[str, Any] | None, outliers: Mapping[str, Any] | None, error: str
) -> str:
    """Return the fleet summary and outliers of ``metric`` by the fields ``by`` (the same documents
    as ``fleet summary`` and ``fleet outliers --format json``), or the one-line ``error``."""
    form = (
        '<form method="get" action="/fleet" class="filter">'
        f'<label>metric <input name="metric" value="{escape(metric)}" maxlength="64"></label> '
        f'<label>by <input name="by" value="{escape(by)}" placeholder="kernel_series,arch" '
        'maxlength="200"></label> '
        "<button>show</button></form>"
    )
    parts = [section("Fleet", form)]
    if error:
        parts.append(f'<p class="error" role="alert">{_e(error, 400)}</p>')
    if summary is not None:
        fields = [str(f) for f in summary.get("by", [])]
        columns = [*fields, "n", "ok", "failed", "incomplete", "p50", "p50_ci", "p90", "p99", "failed_rate"]
        parts.append(
            section(f"Summary of {metric}", json_table(summary.get("groups", []), columns), id_="summary")
        )
    if outliers is not None:
        rows = outliers.get("outliers", [])
        columns = list(rows[0].keys()) if rows else ["value"]
        inner = json_table(rows, columns) if rows else '<p class="none">No outlier.</p>'
        parts.append(section("Outliers", inner, id_="outliers"))
    return layout("Fleet", "".join(parts), here="/fleet")


def boots_nav(run_id: int, boots: Sequence[tuple[int, str, str]]) -> str:
    """Return the served run page's first part: the navigation bar and every boot of run
    ``run_id`` (index, variant, outcome) as a link to its own page, with the form that compares
    this run's variants."""
    links = " ".join(
        f'<a class="boot {escape(outcome)}" href="/runs/{run_id}/boots/{index}" '
        f'title="{_e(variant)}: {_e(outcome)}">{index}</a>'
        for index, variant, outcome in boots
    )
    return (
        nav_bar("/runs") + f'<div class="served"><section id="boots"><h2>Boots of run {run_id}</h2>'
        f'<p class="hint">Each boot opens its timeline and console.</p><p class="boot-links">{links}</p>'
        "</section></div>\n"
    )


def error_page(status: int, message: str) -> str:
    """Return the page of a refused or failed request: its status and one line."""
    what = {400: "Bad request", 403: "Refused", 404: "Not found", 503: "Store unavailable"}.get(
        status, "Error"
    )
    return layout(f"{status} {what}", f'<p class="error" role="alert">{_e(message, 400)}</p>')

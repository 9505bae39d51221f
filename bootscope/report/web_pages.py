"""The dashboard's pages (``bootscope serve``) as HTML text: the overview, a series, the alerts and
one alert (with its triage form and bisect command), the runs, a comparison and the fleet.

Every string that comes from a log, a label, a unit or a user passes through ``html.escape`` (text
and attribute alike); a page carries no inline script, so the server's Content-Security-Policy
allows scripts from its own ``/static/`` only. Links use the ids the store gave, never user text.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from urllib.parse import quote

from bootscope.metrics import unit_of
from bootscope.report.alerts_out import fingerprint_text, moved_text, revisions
from bootscope.report.web_layout import layout, nav_bar, section, table
from bootscope.report.web_layout import text as _e
from bootscope.report.web_svg import series_svg, sparkline_svg
from bootscope.store.owner import shown_status
from bootscope.store.records import ExperimentSummary
from bootscope.store.watch import STATES, Alert
from bootscope.usecases.dashboard import Overview, RunsPage, SeriesDetail, SeriesPoint


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
    search = (
        '<form method="get" action="/" class="filter" role="search"><label>series with every word'
        f' <input name="q" value="{escape(view.query)}" placeholder="metric machine=lab1"'
        ' maxlength="200"></label> <button>find</button></form>'
    )
    pager = _pager(view.page, view.pages, "/", view.query)
    body = (
        "".join(groups)
        or '<p class="none">No series yet: `bootscope watch` builds them from stored runs.</p>'
    )
    parts.append(
        section(f"Series ({view.series_total}), by fingerprint", search + body + pager, id_="series")
    )
    parts.append(section("Latest runs", table(RUN_HEADERS, _run_rows(view.recent)), id_="recent"))
    return layout("Boot time", "".join(parts), here="/")


def _pager(page: int, pages: int, path: str = "/", query: str = "") -> str:
    if pages <= 1:
        return ""
    also = f"&amp;q={quote(query)}" if query else ""
    links = []
    if page > 1:
        links.append(f'<a href="{path}?page={page - 1}{also}">previous</a>')
    links.append(f"page {page} of {pages}")
    if page < pages:
        links.append(f'<a href="{path}?page={page + 1}{also}">next</a>')
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
            _against_previous(previous, p),
        ]
        for previous, p in reversed(list(zip((None, *detail.points[:-1]), detail.points, strict=True)))
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
        section(
            "Points, newest first",
            table(("revision", "boots", "median", "95% interval", "runs", "what moved"), rows),
        )
    )
    return layout(title, "".join(body))


def _against_previous(previous: SeriesPoint | None, point: SeriesPoint) -> str:
    if previous is None or not previous.runs or not point.runs:
        return "-"
    href = f"/compare?a={previous.runs[0]}&amp;b={point.runs[0]}"
    return f'<a href="{href}">against {_e(previous.revision, 40)}</a>'


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


def runs_page(view: RunsPage) -> str:
    """Return one page of the stored runs, newest first, with a pager."""
    inner = (
        table(RUN_HEADERS, _run_rows(list(reversed(view.runs))))
        if view.runs
        else '<p class="none">No run.</p>'
    )
    pager = _pager(view.page, view.pages, "/runs")
    return layout("Runs", section(f"{view.total} runs", inner + pager), here="/runs")


def boots_nav(run_id: int, variants: Sequence[str], boots: Sequence[tuple[int, str, str]]) -> str:
    """Return the served run page's first part: the navigation bar, a link per variant after the
    first to what moved against it (the compare page), and every boot of run ``run_id`` (index,
    variant, outcome) as a link to its own page."""
    links = " ".join(
        f'<a class="boot {escape(outcome)}" href="/runs/{run_id}/boots/{index}" '
        f'title="{_e(variant)}: {_e(outcome)}">{index}</a>'
        for index, variant, outcome in boots
    )
    moved = " · ".join(
        f'<a class="moved" href="/compare?a={run_id}:{quote(variants[0])}&amp;b={run_id}:{quote(v)}">'
        f"{_e(v)} against {_e(variants[0])}</a>"
        for v in variants[1:]
    )
    what_moved = f"<p>What moved: {moved}</p>" if moved else ""
    return (
        nav_bar("/runs") + f'<div class="served"><section id="boots"><h2>Boots of run {run_id}</h2>'
        f"{what_moved}"
        f'<p class="hint">Each boot opens its timeline and console.</p><p class="boot-links">{links}</p>'
        "</section></div>\n"
    )

"""``bootscope watch``, ``alerts`` and ``alert`` rendered: plain-text tables fitted to the terminal, JSON.

Revisions, labels and notes are user text: cells are plain strings (never markup), control
characters shown as ``\\xNN`` (``text_cells.clean``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bootscope import metrics
from bootscope.report.text_cells import clean
from bootscope.report.text_table import (
    Column,
    TextTable,
    cell_width,
    drop_to_fit,
    lay_out,
    left_out_line,
    paragraph,
    without,
)
from bootscope.store.watch import Alert, AlertItem
from bootscope.store.watch_series import TOTAL
from bootscope.usecases.watch.alerts import WatchUpdate
from bootscope.usecases.watch.explain import ExplainedItem

if TYPE_CHECKING:
    from rich.console import Console

_ALERTS_DROPPABLE = ("updated (UTC)",)
_ITEMS_DROPPABLE = ("series", "before", "p", "interval")  # the series are listed below the table
EXPLAINED_ROWS = 8  # components shown per explained step


def _unit(metric: str) -> str:
    return metrics.unit_of(metric)


def _amount(value: float | None, metric: str, sign: bool = False) -> str:
    if value is None:
        return "-"
    unit = _unit(metric)
    if unit == "s":
        return f"{value * 1000:+.1f} ms" if sign else f"{value * 1000:.1f} ms"
    return f"{value:+.3g} {unit}" if sign else f"{value:.3g} {unit}"


def _relative(item: AlertItem) -> str:
    if item.shift is None or not item.before:
        return "-"
    return f"{item.shift / item.before:+.1%}"


def _ratio(item: AlertItem) -> str:
    if item.shift is None:
        return "-"
    return "inf" if item.jitter_ratio is None else f"{item.jitter_ratio:.1f}x"


def revisions(alert: Alert) -> str:
    """Return an alert's revision range as ``first..last`` (one revision when they are the same)."""
    first, last = clean(alert.first_revision, 40), clean(alert.last_revision, 40)
    return first if first == last else f"{first}..{last}"


def moved_text(alert: Alert) -> str:
    """Return what moved most in ``alert`` (its largest shift, in jitters, and how many more), or how
    long a missing series has been silent."""
    if alert.kind == "missing":
        item = alert.items[0] if alert.items else None
        silent = item.detail.get("silent_s") if item else None
        cadence = item.detail.get("cadence_s") if item else None
        if isinstance(silent, int | float) and isinstance(cadence, int | float):
            return f"no point for {silent / 3600:.1f} h (usual spacing {cadence / 3600:.1f} h)"
        return "no new point"
    worst = max(alert.items, key=lambda i: abs(i.shift or 0.0), default=None)
    if worst is None:
        return "-"
    others = len(alert.items) - 1
    more = f" and {others} more" if others else ""
    shift = _amount(worst.shift, worst.metric, sign=True)
    return f"{clean(worst.metric)} {shift} ({_ratio(worst)} jitter){more}"


def alerts_table(alerts: Sequence[Alert]) -> TextTable:
    """Return the alerts as a table: id, state, kind, revisions, what moved most (and on how many
    series), updated."""
    headers = ("id", "state", "kind", "revisions", "moved", "updated (UTC)")
    table = TextTable(tuple(Column(h, right=h == "id", fold=h in ("moved", "revisions")) for h in headers))
    for alert in alerts:
        series = len({item.series for item in alert.items})
        moved = moved_text(alert) + (f", {series} series" if series > 1 else "")
        table.add_row(
            str(alert.id),
            alert.state,
            alert.kind,
            revisions(alert),
            moved,
            alert.updated.replace("T", " ")[:16],
        )
    return table


def _fit(table: TextTable, width: int, droppable: Sequence[str]) -> list[str]:
    """The table's lines within ``width``: the droppable columns left out (in order) while the table
    would be wider than that, and a line naming them."""
    fitted, dropped = drop_to_fit(table, width, droppable)
    for header in droppable:
        natural = max((cell_width(line) for line in lay_out(fitted, 1 << 20)), default=0)
        if natural <= width or header in dropped or header not in {c.header for c in fitted.columns}:
            continue
        fitted = without(fitted, (header,))
        dropped = (*dropped, header)
    lines = lay_out(fitted, width)
    if dropped:
        lines += paragraph(left_out_line(dropped, width), width)
    return lines


def alerts_text(alerts: Sequence[Alert], db: str, width_cells: int) -> str:
    """Return the alerts of store ``db`` as lines that fit ``width_cells`` terminal cells."""
    if not alerts:
        return f"no alerts in {clean(db)}\n"
    untriaged = sum(1 for a in alerts if a.state == "untriaged")
    lines = paragraph(f"{len(alerts)} alert(s) in {clean(db)}, {untriaged} untriaged", width_cells, "")
    lines += _fit(alerts_table(alerts), width_cells, _ALERTS_DROPPABLE)
    lines += paragraph(
        "`bootscope alert ID` shows one; `bootscope alert ID triage --state S --note T` triages it",
        width_cells,
        "",
    )
    return "\n".join(lines) + "\n"


def fingerprint_text(fingerprint: Mapping[str, str], limit: int = 100) -> str:
    """Return a fingerprint as ``field=value`` pairs, the machine first, cleaned and cut to ``limit``."""
    first = ("machine", "cpu_model", "cores", "accel")
    keys = [k for k in first if k in fingerprint] + sorted(k for k in fingerprint if k not in first)
    return clean(" ".join(f"{k}={fingerprint[k]}" for k in keys if fingerprint[k] not in ("", "null")), limit)


def items_table(alert: Alert) -> TextTable:
    """Return an alert's items: metric, component, series, shift, relative, interval, p, jitters, before."""
    headers = ("metric", "component", "series", "shift", "relative", "interval", "p", "x jitter", "before")
    numbers = {"shift", "relative", "p", "x jitter", "before"}
    table = TextTable(
        tuple(Column(h, right=h in numbers, fold=h in ("component", "interval")) for h in headers)
    )
    # Totals first, then components; each the largest step first.
    ordered = sorted(alert.items, key=lambda i: (i.component != TOTAL, -abs(i.shift or 0.0)))
    for item in ordered:
        ci = (
            "-"
            if item.ci is None
            else f"{_amount(item.ci[0], item.metric, True)} .. {_amount(item.ci[1], item.metric, True)}"
        )
        table.add_row(
            clean(item.metric), clean(item.component), item.series, _amount(item.shift, item.metric, True),
            _relative(item), ci, "-" if item.p is None else f"{item.p:.2g}", _ratio(item),
            _amount(item.before, item.metric),
        )  # fmt: skip
    return table


def alert_text(alert: Alert, width_cells: int) -> str:
    """Return one alert: its range, state, items, the fingerprints of its series, its history, and
    the command that bisects it."""
    lines = paragraph(
        f"alert {alert.id}: {alert.kind} in {revisions(alert)} ({alert.state});"
        f" last revision before it: {clean(alert.good_revision or '-', 40)}",
        width_cells,
        "",
    )
    if alert.kind == "missing":
        lines += paragraph(moved_text(alert), width_cells)
    else:
        lines += _fit(items_table(alert), width_cells, _ITEMS_DROPPABLE)
    lines.append("series:")
    seen: set[str] = set()
    for item in alert.items:
        if item.series not in seen:
            seen.add(item.series)
            lines += paragraph(f"{item.series}  {fingerprint_text(item.fingerprint, 400)}", width_cells, "  ")
    lines.append("history:")
    for event in alert.events:
        lines += paragraph(
            f"{event.at.replace('T', ' ')[:19]}  {clean(event.by, 40)}: {event.state}"
            f"  {clean(event.note, 400)}",
            width_cells,
            "  ",
        )
    if alert.kind != "missing" and alert.good_revision:
        lines += paragraph(
            f"bisect it: bootscope bisect-run --alert {alert.id} (good {clean(alert.good_revision, 40)},"
            f" bad {clean(alert.last_revision, 40)})",
            width_cells,
            "",
        )
    method = alert.rule
    if method:
        lines += paragraph(
            "rule: back window {back_points}, fore window {fore_points} revisions; a step is at least"
            " {min_jitter_ratio}x the series' jitter with window p <= {alpha}".format(
                **{k: method.get(k, "?") for k in ("back_points", "fore_points", "min_jitter_ratio", "alpha")}
            )
            + (
                "; components of one kind on one machine: Benjamini-Hochberg at alpha over their series"
                if any(item.component != TOTAL for item in alert.items)
                else ""
            ),
            width_cells,
            "",
        )
    return "\n".join(lines) + "\n"


def item_json(item: AlertItem) -> dict[str, Any]:
    """Return one alert item as a JSON-able object."""
    return {
        "metric": item.metric, "component": item.component, "series": item.series,
        "fingerprint": dict(item.fingerprint), "revision": item.revision,
        "first_revision": item.first_revision, "last_revision": item.last_revision,
        "good_revision": item.good_revision, "shift": item.shift,
        "ci": list(item.ci) if item.ci is not None else None, "p": item.p, "jitter": item.jitter,
        "jitter_ratio": item.jitter_ratio, "before": item.before, "unit": _unit(item.metric),
        "detail": dict(item.detail),
    }  # fmt: skip


def alert_json(alert: Alert) -> dict[str, Any]:
    """Return one alert as a JSON-able object (with its items and history)."""
    return {
        "id": alert.id, "state": alert.state, "kind": alert.kind,
        "first_revision": alert.first_revision, "last_revision": alert.last_revision,
        "good_revision": alert.good_revision, "created": alert.created, "updated": alert.updated,
        "items": [item_json(item) for item in alert.items],
        "events": [{"at": e.at, "by": e.by, "state": e.state, "note": e.note} for e in alert.events],
        "rule": dict(alert.rule),
    }  # fmt: skip


def alerts_json(alerts: Sequence[Alert]) -> str:
    """Return ``{"alerts": [...]}`` as indented JSON text with a final newline."""
    return json.dumps({"alerts": [alert_json(a) for a in alerts]}, indent=2) + "\n"


def watch_text(update: WatchUpdate, db: str, width_cells: int) -> str:
    """Return what a recomputation did: series judged, those short of history, alerts opened and
    updated, and the open (untriaged) alerts."""
    short = update.short_of_history
    lines = paragraph(
        f"{len(update.series)} series judged in {clean(db)}"
        + (f" ({short} short of history: fewer than {update.rule.min_points} revisions)" if short else "")
        + f"; {len(update.opened)} alert(s) opened, {len(update.updated)} updated",
        width_cells,
        "",
    )
    open_alerts = [a for a in update.alerts if a.state == "untriaged"]
    if open_alerts:
        lines += _fit(alerts_table(list(reversed(open_alerts))), width_cells, _ALERTS_DROPPABLE)
    return "\n".join(lines) + "\n"


def watch_json(update: WatchUpdate) -> str:
    """Return a recomputation as JSON: series (key, metric, points, jitter, enough history), the ids
    opened and updated, and every alert."""
    document = {
        "series": [
            {
                "series": r.key,
                "metric": r.metric,
                "points": r.points,
                "jitter": r.jitter,
                "enough_history": r.enough_history,
            }
            for r in update.series
        ],
        "opened": list(update.opened),
        "updated": list(update.updated),
        "rule": update.rule.to_dict(),
        "alerts": [alert_json(a) for a in update.alerts],
    }
    return json.dumps(document, indent=2) + "\n"


def print_explained(explained: Sequence[ExplainedItem], console: Console) -> None:
    """Print, per step of an alert, the diff of its boots (``alert ID --by``) or why there is none."""
    from bootscope.report.diff_out import table as diff_table

    for entry in explained:
        head = f"{clean(entry.item.metric)} {clean(entry.item.component)} at {clean(entry.item.revision, 40)}"
        head += f" (series {entry.item.series})"
        if entry.diff is None:
            console.print(f"{head}: not explained: {entry.why}", markup=False, highlight=False)
            continue
        console.print(f"{head}: what moved", markup=False, highlight=False)
        console.print(diff_table(entry.diff, EXPLAINED_ROWS))


def alert_document(alert: Alert, explained: Sequence[ExplainedItem] | None) -> str:
    """Return one alert as indented JSON text (:func:`alert_json`), with ``explained`` (per step:
    series, revision, and the diff of its boots or why there is none) when ``--by`` was given."""
    from bootscope.report.diff_out import diff_dict

    document = alert_json(alert)
    if explained is not None:
        document["explained"] = [
            {
                "series": entry.item.series,
                "metric": entry.item.metric,
                "component": entry.item.component,
                "revision": entry.item.revision,
                **(
                    {"diff": diff_dict(entry.diff, EXPLAINED_ROWS)}
                    if entry.diff is not None
                    else {"why": entry.why}
                ),
            }
            for entry in explained
        ]
    return json.dumps(document, indent=2) + "\n"

"""The dashboard's own JSON documents (``/api/overview``, ``/api/series/KEY``); every other API
answer is the document its command prints with ``--format json``."""

from __future__ import annotations

from typing import Any

from bootscope.metrics import unit_of
from bootscope.report.alerts_out import alert_json
from bootscope.store.owner import shown_status
from bootscope.store.records import ExperimentSummary
from bootscope.usecases.dashboard import Overview, SeriesDetail


def _run(summary: ExperimentSummary) -> dict[str, Any]:
    e = summary.experiment
    return {
        "id": e.id, "created": e.created, "status": shown_status(e), "variants": [v.name for v in e.variants],
        "boots": summary.boots, "ok": summary.ok, "failed": summary.failed, "meta": dict(e.meta),
    }  # fmt: skip


def overview_json(view: Overview) -> dict[str, Any]:
    """Return the overview as ``{"open_alerts": [alert...], "series_total", "page", "pages", "query",
    "groups": [{"fingerprint", "series": [{"key", "metric", "unit", "component", "points",
    "last_revision", "last_median", "spark", "alerts"}]}], "running": [run...], "recent": [run...]}``."""
    return {
        "open_alerts": [alert_json(a) for a in view.open_alerts],
        "series_total": view.series_total,
        "page": view.page,
        "pages": view.pages,
        "query": view.query,
        "groups": [
            {
                "fingerprint": dict(group.fingerprint),
                "series": [
                    {
                        "key": s.key,
                        "metric": s.metric,
                        "unit": unit_of(s.metric),
                        "component": s.component,
                        "points": s.points,
                        "last_revision": s.last_revision,
                        "last_median": s.last_median,
                        "spark": list(s.spark),
                        "alerts": list(s.alert_ids),
                    }
                    for s in group.series
                ],
            }
            for group in view.groups
        ],
        "running": [_run(r) for r in view.running],
        "recent": [_run(r) for r in view.recent],
    }


def series_json(detail: SeriesDetail) -> dict[str, Any]:
    """Return a series as ``{"key", "metric", "unit", "component", "fingerprint", "points":
    [{"revision", "time_s", "boots", "median", "ci", "runs"}], "alerts": [{"id", "kind", "state",
    "revision", "first_revision", "last_revision"}]}``."""
    return {
        "key": detail.key,
        "metric": detail.metric,
        "unit": unit_of(detail.metric),
        "component": detail.component,
        "fingerprint": dict(detail.fingerprint),
        "points": [
            {
                "revision": p.revision,
                "time_s": p.time_s,
                "boots": p.boots,
                "median": p.median,
                "ci": list(p.ci) if p.ci else None,
                "runs": list(p.runs),
            }
            for p in detail.points
        ],
        "alerts": [
            {
                "id": m.alert_id,
                "kind": m.kind,
                "state": m.state,
                "revision": m.revision,
                "first_revision": m.first_revision,
                "last_revision": m.last_revision,
            }
            for m in detail.alerts
        ],
    }

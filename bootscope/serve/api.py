"""The JSON API: for every page the same data, and where a command answers the same question its
``--format json`` document, so that a script can use either. The one write, triage, needs the token."""

from __future__ import annotations

import json

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from bootscope.errors import InputError
from bootscope.metrics import DEFAULT_METRIC
from bootscope.report.alerts_out import alert_json, alerts_json
from bootscope.report.diff_out import to_json as diff_json
from bootscope.report.html import boot_data, run_data
from bootscope.report.runs_out import runs_json
from bootscope.report.web_json import overview_json, series_json
from bootscope.serve.context import Served, answer_json, param, path_id, token_ok
from bootscope.serve.queries import Answers, page_number, series_key
from bootscope.usecases.dashboard import overview, series_detail, served_run
from bootscope.usecases.runs import list_runs
from bootscope.usecases.views import boot_view
from bootscope.usecases.watch.alerts import list_alerts, show_alert, triage_alert

MAX_NOTE_CHARS = 2000


class Api:
    """The JSON handlers of one server."""

    def __init__(self, served: Served, answers: Answers) -> None:
        """``served``: the server's store and settings; ``answers``: the costly answers it keeps."""
        self.served = served
        self.answers = answers

    def overview(self, request: Request) -> Response:
        """The overview page's data."""
        return answer_json(
            overview_json(overview(self.served.db, page_number(request), param(request, "q", limit=200)))
        )

    def series(self, request: Request) -> Response:
        """One series point by point."""
        return answer_json(series_json(series_detail(self.served.db, series_key(request), self.served.alpha)))

    def alerts(self, request: Request) -> Response:
        """`bootscope alerts --format json`."""
        state = param(request, "state", limit=20) or None
        return answer_json(json.loads(alerts_json(list_alerts(self.served.db, state))))

    def alert(self, request: Request) -> Response:
        """`bootscope alert ID --format json`."""
        return answer_json(alert_json(show_alert(self.served.db, path_id(request, "alert"))))

    async def triage(self, request: Request) -> Response:
        """Set an alert's state: needs the token in the X-Bootscope-Token header and a JSON body
        ``{"state", "note", "who"}``; answers the alert as `alert ID --format json` does."""
        if self.served.token is None:
            return answer_json({"error": "this server is read-only: start it with --token-file"}, 403)
        if not token_ok(self.served, request):
            return answer_json(
                {"error": "a write needs the server's token in the X-Bootscope-Token header"}, 403
            )
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return answer_json({"error": "send the triage as application/json"}, 415)
        try:
            body = json.loads(await request.body())
        except (ValueError, UnicodeDecodeError):
            return answer_json({"error": "the body is not JSON"}, 400)
        if not isinstance(body, dict):
            return answer_json({"error": 'the body is a JSON object: {"state", "note", "who"}'}, 400)
        state, note, who = (body.get(k) or "" for k in ("state", "note", "who"))
        if not isinstance(state, str) or not isinstance(note, str) or not isinstance(who, str):
            raise InputError('"state", "note" and "who" are strings')
        if not who.strip():
            raise InputError('"who": the name of who triaged it')
        if len(note) > MAX_NOTE_CHARS:
            raise InputError(f"the note is at most {MAX_NOTE_CHARS} characters")
        alert_id = path_id(request, "alert")

        found = await run_in_threadpool(triage_alert, self.served.db, alert_id, state, note, who)
        return answer_json(alert_json(found))

    def runs(self, request: Request) -> Response:
        """`bootscope runs --format json`."""
        return answer_json(json.loads(runs_json(list_runs(self.served.db))))

    def run(self, request: Request) -> Response:
        """A run's data as its page draws it: per metric and variant every counted boot's value, the
        medians with their intervals, and the boots."""
        run_id = path_id(request, "run")
        found = served_run(self.served.db, run_id, self.served.alpha)
        document = run_data(found.view)
        document["id"] = run_id
        document["boots"] = [{"index": i, "variant": v, "outcome": o} for i, v, o in found.boots]
        return answer_json(document)

    def boot(self, request: Request) -> Response:
        """One boot's data as its page draws it (timeline, phases, initcalls, gaps, lines)."""
        run_id, index = path_id(request, "run"), path_id(request, "index")
        return answer_json(boot_data(boot_view(None, str(run_id), self.served.db, index, "auto")))

    def compare(self, request: Request) -> Response:
        """`bootscope diff --format json` of ``b`` against ``a`` (each RUN[:VARIANT])."""
        a, b = param(request, "a", limit=80).strip(), param(request, "b", limit=80).strip()
        if not a or not b:
            raise InputError("give a=RUN[:VARIANT] and b=RUN[:VARIANT]")
        metric = param(request, "metric", DEFAULT_METRIC, limit=64)
        result = self.answers.diff(self.served, a, b, metric)
        return answer_json(json.loads(diff_json(result)))

    def fleet(self, request: Request) -> Response:
        """`fleet summary` and `fleet outliers --format json`: ``{"summary", "outliers"}``."""
        metric = param(request, "metric", DEFAULT_METRIC, limit=64)
        summary, outliers = self.answers.fleet(self.served, metric, param(request, "by", limit=200))
        return answer_json({"summary": summary, "outliers": outliers})

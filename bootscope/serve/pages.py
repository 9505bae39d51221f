"""The dashboard's pages: each calls the use case its command calls and renders it as HTML."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from bootscope.errors import InputError
from bootscope.metrics import DEFAULT_METRIC, DEFINITIONS
from bootscope.report import web_layout, web_pages, web_tools
from bootscope.report.diff_html import diff_fragment
from bootscope.report.html import render_boot_report, render_run_report
from bootscope.serve.context import Served, param, path_id
from bootscope.serve.queries import Answers, alert_bisect_command, page_number, series_key
from bootscope.usecases.dashboard import overview, runs_page, series_detail, served_run
from bootscope.usecases.views import boot_view
from bootscope.usecases.watch.alerts import list_alerts, show_alert

# Components listed on the compare page (the diff's own default).
DIFF_TOP = 15


class Pages:
    """The HTML handlers of one server."""

    def __init__(self, served: Served, answers: Answers) -> None:
        """``served``: the server's store and settings; ``answers``: the costly answers it keeps."""
        self.served = served
        self.answers = answers

    def overview(self, request: Request) -> Response:
        """The overview: open alerts, runs in progress, one page of series, the latest runs."""
        view = overview(self.served.db, page_number(request), param(request, "q", limit=200))
        return HTMLResponse(web_pages.overview_page(view))

    def series(self, request: Request) -> Response:
        """One series point by point."""
        detail = series_detail(self.served.db, series_key(request), self.served.alpha)
        return HTMLResponse(web_pages.series_page(detail))

    def alerts(self, request: Request) -> Response:
        """The alerts, filtered by state."""
        state = param(request, "state", limit=20) or None
        return HTMLResponse(web_pages.alerts_page(list_alerts(self.served.db, state), state))

    def alert(self, request: Request) -> Response:
        """One alert with its triage form and bisect command."""
        found = show_alert(self.served.db, path_id(request, "alert"))
        return HTMLResponse(web_pages.alert_page(found, alert_bisect_command(found.id, self.served.db)))

    def runs(self, request: Request) -> Response:
        """Every stored run."""
        return HTMLResponse(web_pages.runs_page(runs_page(self.served.db, page_number(request))))

    def run(self, request: Request) -> Response:
        """One run: the report `bootscope report --run` writes, its boots listed first."""
        run_id = path_id(request, "run")
        found = served_run(self.served.db, run_id, self.served.alpha)
        nav = web_pages.boots_nav(run_id, found.view.variants, found.boots)
        return HTMLResponse(
            render_run_report(found.view, definitions=DEFINITIONS, served=nav, tune=found.tune)
        )

    def boot(self, request: Request) -> Response:
        """One boot: its timeline, phases, initcalls, gaps and console, searchable."""
        run_id, index = path_id(request, "run"), path_id(request, "index")
        view = boot_view(None, str(run_id), self.served.db, index, "auto")
        nav = web_layout.nav_bar("/runs") + f'<p class="served"><a href="/runs/{run_id}">run {run_id}</a></p>'
        page = render_boot_report(view, definitions=DEFINITIONS, title=f"run {run_id}", served=nav)
        return HTMLResponse(page)

    def compare(self, request: Request) -> Response:
        """Two runs or two variants side by side: the diff's verdict, waterfall and components."""
        a, b = param(request, "a", limit=80).strip(), param(request, "b", limit=80).strip()
        metric = param(request, "metric", DEFAULT_METRIC, limit=64)
        result_html, error = "", ""
        if a and b:
            try:
                result = self.answers.diff(self.served, a, b, metric)
                result_html = diff_fragment(result, DIFF_TOP)
            except InputError as problem:
                error = str(problem)
        return HTMLResponse(web_tools.compare_page(a, b, metric, sorted(DEFINITIONS), result_html, error))

    def fleet(self, request: Request) -> Response:
        """The fleet's summary and outliers by the fields asked for."""
        metric = param(request, "metric", DEFAULT_METRIC, limit=64)
        by = param(request, "by", limit=200)
        try:
            summary, outliers = self.answers.fleet(self.served, metric, by)
            error = ""
        except InputError as problem:
            summary, outliers, error = None, None, str(problem)
        return HTMLResponse(web_tools.fleet_page(metric, by, summary, outliers, error))

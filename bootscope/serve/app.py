"""The application: every route, the package's own assets, and the guard around them."""

from __future__ import annotations

import gzip
from functools import lru_cache
from importlib import resources

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from bootscope.errors import StoreLookupError
from bootscope.serve.api import Api
from bootscope.serve.context import Served, failure, guarded, guarded_async
from bootscope.serve.guard import LOOPBACK_NAMES, Guard
from bootscope.serve.pages import Pages
from bootscope.serve.queries import Answers

# The files under /static/: the dashboard's and the report's own, and Plotly from its package.
ASSETS = {
    "dash.css": ("bootscope.report", "assets/dash.css", "text/css"),
    "dash.js": ("bootscope.report", "assets/dash.js", "text/javascript"),
    "report.css": ("bootscope.report", "assets/report.css", "text/css"),
    "report.js": ("bootscope.report", "assets/report.js", "text/javascript"),
    "plotly.min.js": ("plotly", "package_data/plotly.min.js", "text/javascript"),
}
ASSET_MAX_AGE_S = 3600


@lru_cache(maxsize=len(ASSETS))
def _asset(name: str) -> tuple[bytes, bytes]:
    package, path, _ = ASSETS[name]
    data = resources.files(package).joinpath(path).read_bytes()
    return data, gzip.compress(data, compresslevel=9, mtime=0)


def _static(request: Request) -> Response:
    name = str(request.path_params["name"])
    if name not in ASSETS:
        return failure(request, StoreLookupError(f"no file {name[:40]!r}"), as_json=False)
    plain, packed = _asset(name)
    headers = {"cache-control": f"public, max-age={ASSET_MAX_AGE_S}", "vary": "accept-encoding"}
    if "gzip" in request.headers.get("accept-encoding", ""):
        headers["content-encoding"] = "gzip"
        return Response(packed, media_type=ASSETS[name][2], headers=headers)
    return Response(plain, media_type=ASSETS[name][2], headers=headers)


def make_app(served: Served) -> Starlette:
    """Return the dashboard over ``served``'s store (without the :class:`Guard`: see
    :func:`guarded_app`)."""
    answers = Answers()
    pages, api = Pages(served, answers), Api(served, answers)

    def page(path: str, handler: object) -> Route:
        return Route(path, guarded(handler, as_json=False), methods=["GET"])  # type: ignore[arg-type]

    def data(path: str, handler: object) -> Route:
        return Route(path, guarded(handler, as_json=True), methods=["GET"])  # type: ignore[arg-type]

    routes = [
        page("/", pages.overview),
        page("/series/{key}", pages.series),
        page("/alerts", pages.alerts),
        page("/alerts/{alert:int}", pages.alert),
        page("/runs", pages.runs),
        page("/runs/{run:int}", pages.run),
        page("/runs/{run:int}/boots/{index:int}", pages.boot),
        page("/compare", pages.compare),
        page("/fleet", pages.fleet),
        data("/api/overview", api.overview),
        data("/api/series/{key}", api.series),
        data("/api/alerts", api.alerts),
        data("/api/alerts/{alert:int}", api.alert),
        Route("/api/alerts/{alert:int}/triage", guarded_async(api.triage, as_json=True), methods=["POST"]),
        data("/api/runs", api.runs),
        data("/api/runs/{run:int}", api.run),
        data("/api/runs/{run:int}/boots/{index:int}", api.boot),
        data("/api/compare", api.compare),
        data("/api/fleet", api.fleet),
        Route("/static/{name}", _static, methods=["GET"]),
        Route("/favicon.ico", lambda request: Response(status_code=204), methods=["GET"]),
    ]
    middleware = [Middleware(GZipMiddleware, minimum_size=2048)]
    app = Starlette(routes=routes, middleware=middleware)

    async def not_found(request: Request, exc: Exception) -> Response:
        as_json = request.url.path.startswith("/api/")
        return failure(request, StoreLookupError(f"no page {request.url.path[:80]}"), as_json=as_json)

    async def not_allowed(request: Request, exc: Exception) -> Response:
        return Response("method not allowed\n", status_code=405, media_type="text/plain")

    app.add_exception_handler(404, not_found)
    app.add_exception_handler(405, not_allowed)
    return app


def guarded_app(served: Served, loopback_only: bool) -> Guard:
    """Return :func:`make_app` behind the :class:`Guard` (Host, sizes, security headers)."""
    return Guard(make_app(served), LOOPBACK_NAMES if loopback_only else None)

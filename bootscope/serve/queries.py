"""Request parameters read and checked, and the answers that pages and the API share."""

from __future__ import annotations

import re
import shlex
from typing import Any

from starlette.requests import Request

from bootscope.errors import InputError, StoreLookupError
from bootscope.report.fleet_out import outliers_json, summary_json
from bootscope.serve.context import param
from bootscope.usecases.fleet.query import OUTLIER_Z, fleet_outliers, fleet_summary

_KEY = re.compile(r"[A-Za-z0-9_.-]{1,64}")
MAX_PAGE = 1_000_000


def series_key(request: Request) -> str:
    """Return the series key in the path; raises StoreLookupError for one no series can have."""
    key = str(request.path_params["key"])
    if not _KEY.fullmatch(key):
        raise StoreLookupError("no such series (see the overview)")
    return key


def page_number(request: Request) -> int:
    """Return the ``page`` parameter (1 when absent); raises InputError for anything but 1 to
    ``MAX_PAGE``."""
    text = param(request, "page", "1", limit=8)
    if not text.isdigit() or not 1 <= int(text) <= MAX_PAGE:
        raise InputError(f"page: a number from 1 to {MAX_PAGE}")
    return int(text)


def alert_bisect_command(alert_id: int, db: str) -> str:
    """Return the command, run in the kernel's git tree, that bisects alert ``alert_id``'s range (a
    database URL's password shown as ``***``: the page is for anyone who can read it)."""
    if "://" in db:
        from sqlalchemy.engine import make_url

        db = make_url(db).render_as_string(hide_password=True)
    return (
        f"bootscope bisect-run --alert {alert_id} --db {shlex.quote(db)} "
        "--build 'make -j\"$(nproc)\" bzImage' --kernel arch/x86/boot/bzImage"
    )


def fleet_documents(db: str, metric: str, by: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Return ``fleet summary`` and ``fleet outliers`` of ``metric`` by ``by`` (comma-separated
    fields) as their JSON documents. Raises InputError for an unknown metric or field."""
    summary = summary_json(fleet_summary(db, None, metric, by))
    outliers = outliers_json(fleet_outliers(db, None, metric, by, OUTLIER_Z))
    return summary, outliers

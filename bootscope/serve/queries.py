"""Request parameters read and checked, and the answers that pages and the API share."""

from __future__ import annotations

import re
import shlex
import threading
from collections import OrderedDict
from typing import Any

from starlette.requests import Request

from bootscope.errors import InputError, StoreLookupError
from bootscope.report.fleet_out import outliers_json, summary_json
from bootscope.serve.context import Served, param
from bootscope.stats.attribution import DiffResult
from bootscope.store import Store
from bootscope.usecases.diff import diff_stored_sides, split_run
from bootscope.usecases.fleet.query import OUTLIER_Z, fleet_outliers, fleet_summary

_KEY = re.compile(r"[A-Za-z0-9_.-]{1,64}")
MAX_PAGE = 1_000_000
# The false discovery rate of a diff's components (`bootscope diff`'s default).
DIFF_FDR = 0.05


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


class DiffCache:
    """The diffs last asked for, each kept while neither of its runs has changed (its status and its
    boots counted again on every request: a run still measuring gets a new diff each time). A diff
    reads and analyses every boot's log, which costs far more than the page's other answers."""

    def __init__(self, size: int = 32) -> None:
        """Keep at most ``size`` diffs, the least recently used dropped first."""
        self._size = size
        self._kept: OrderedDict[tuple[object, ...], DiffResult] = OrderedDict()
        self._lock = threading.Lock()

    def diff(self, served: Served, a: str, b: str, metric: str) -> DiffResult:
        """Return the diff of ``b`` against ``a`` (each RUN[:VARIANT]) of ``metric``, as
        :func:`diff_stored_sides` computes it. Raises what it raises."""
        state = _runs_state(served.db, (split_run(a)[0], split_run(b)[0]))
        key = (a, b, metric, served.alpha, state)
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        result = diff_stored_sides(served.db, a, b, metric=metric, alpha=served.alpha, fdr=DIFF_FDR)
        with self._lock:
            self._kept[key] = result
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return result


def _runs_state(db: str, runs: tuple[str, ...]) -> tuple[tuple[int, str, int, int], ...]:
    with Store.open(db, create=False) as store:
        ids = [store.experiment(run).id for run in runs]
        return tuple(
            (s.experiment.id, s.experiment.status, s.boots, s.ok)
            for s in store.list_experiments(sorted(set(ids)))
        )

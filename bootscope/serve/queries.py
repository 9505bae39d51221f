"""Request parameters read and checked, and the answers that pages and the API share."""

from __future__ import annotations

import re
import shlex
from typing import Any

from starlette.requests import Request

from bootscope.errors import InputError, StoreLookupError
from bootscope.report.fleet_out import outliers_json, summary_json
from bootscope.serve.context import Served, param
from bootscope.serve.kept import Kept
from bootscope.stats.attribution import DiffResult
from bootscope.store import Store
from bootscope.store.fleet import fleet_state
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


class Answers:
    """The costly answers of one server, each kept while what it was computed from is unchanged:
    a diff while neither run changed (status and boots, read again on every request: a run still
    measuring gets a new diff each time), a fleet query while no fleet file was imported."""

    def __init__(self, size: int = 32) -> None:
        """Keep at most ``size`` diffs and ``size`` fleet answers."""
        self._diffs: Kept[DiffResult] = Kept(size)
        self._fleet: Kept[tuple[dict[str, Any], dict[str, Any]]] = Kept(size)

    def diff(self, served: Served, a: str, b: str, metric: str) -> DiffResult:
        """Return the diff of ``b`` against ``a`` (each RUN[:VARIANT]) of ``metric``, as
        :func:`diff_stored_sides` computes it. Raises what it raises."""
        state = _runs_state(served.db, (split_run(a)[0], split_run(b)[0]))
        return self._diffs.get(
            (a, b, metric, served.alpha, state),
            lambda: diff_stored_sides(served.db, a, b, metric=metric, alpha=served.alpha, fdr=DIFF_FDR),
        )

    def fleet(self, served: Served, metric: str, by: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """Return ``fleet summary`` and ``fleet outliers`` of ``metric`` by ``by`` (comma-separated
        fields) as their JSON documents. Raises InputError for an unknown metric or field."""
        with Store.open(served.db, create=False) as store:
            state = fleet_state(store)

        def make() -> tuple[dict[str, Any], dict[str, Any]]:
            summary = summary_json(fleet_summary(served.db, None, metric, by))
            return summary, outliers_json(fleet_outliers(served.db, None, metric, by, OUTLIER_Z))

        return self._fleet.get((metric, by, state), make)


def _runs_state(db: str, runs: tuple[str, ...]) -> tuple[tuple[int, str, int, int], ...]:
    with Store.open(db, create=False) as store:
        ids = [store.experiment(run).id for run in runs]
        return tuple(
            (s.experiment.id, s.experiment.status, s.boots, s.ok)
            for s in store.list_experiments(sorted(set(ids)))
        )

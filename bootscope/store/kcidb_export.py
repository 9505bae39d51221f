"""Stored boots as a KCIDB v5 document (KernelCI's common report database; the schema is
kernelci/kcidb-io's ``kcidb_io/schema/v05_*.py``), so results go to KernelCI with no new schema.

Shape: one checkout per kernel release, one build per (checkout, architecture), and per boot one
test with ``path: "boot"`` and its status (``PASS``; ``FAIL`` for a boot that failed), plus one test
per metric with ``path: "boot.METRIC"``, ``status: "DONE"`` and ``number: {"value", "unit"}`` (the
metric's registered unit; seconds for every boot phase), its ``id`` the boot's id followed by
``.METRIC`` (how ``fleet import`` links them back). Host metadata goes to the boot test's ``misc``
(free-form, as the schema provides); the environment's ``misc.platform`` is the ``model`` field.
KCIDB allows no null anywhere, so an absent value is an absent key. Ids are ``ORIGIN:...`` and the
origin matches ``[a-z0-9_]+``; a test path matches ``[a-zA-Z0-9_-]+(\\.[a-zA-Z0-9_-]+)*``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from bootscope.errors import InputError
from bootscope.metrics import unit_of
from bootscope.store.fleet import OUTCOME_OK, FleetRow, iter_fleet_rows

if TYPE_CHECKING:
    from bootscope.store.db import Store

KCIDB_MAJOR = 5
KCIDB_MINOR = 0  # only fields that 5.0 already has are written
ORIGIN_RE = re.compile(r"^[a-z0-9_]+$")
TEST_PATH_RE = re.compile(r"^([a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*)?$")
_UNSAFE = re.compile(r"[^a-zA-Z0-9_.-]+")
# Required fields per object (kcidb-io v5: the top level needs "version" with "major").
REQUIRED = {
    "checkouts": ("id", "origin"),
    "builds": ("id", "origin", "checkout_id"),
    "tests": ("id", "origin", "build_id"),
}
STATUSES = ("FAIL", "ERROR", "MISS", "PASS", "DONE", "SKIP")


def _safe(text: str) -> str:
    return _UNSAFE.sub("_", text).strip("_") or "unknown"


def _status(outcome: str) -> str:
    if outcome == OUTCOME_OK:
        return "PASS"
    return "MISS" if outcome == "not-run" else "FAIL"


def kcidb_document(rows: Iterable[FleetRow], origin: str, kind: str = "fleet") -> dict[str, Any]:
    """Return the KCIDB v5 document of stored boots (``kind`` goes into each boot's id: ``fleet``
    boots are FILE-BOOT, ``run`` boots EXPERIMENT-INDEX); raises InputError for an origin that
    KCIDB does not accept (lower-case letters, digits and ``_``)."""
    if not ORIGIN_RE.match(origin):
        raise InputError(f"--origin {origin!r}: KCIDB origins are lower-case letters, digits and _")
    checkouts: dict[str, dict[str, Any]] = {}
    builds: dict[str, dict[str, Any]] = {}
    tests: list[dict[str, Any]] = []
    for row in rows:
        kernel = row.kernel_release or row.meta.get("kernel") or "unknown"
        checkout_id = f"{origin}:kernel-{_safe(kernel)}"
        checkouts.setdefault(checkout_id, {"id": checkout_id, "origin": origin, "comment": kernel})
        arch = _safe(row.meta.get("arch", "unknown")).lower().replace("-", "_").replace(".", "_")
        build_id = f"{checkout_id}-{arch}"
        builds.setdefault(
            build_id, {"id": build_id, "origin": origin, "checkout_id": checkout_id, "architecture": arch}
        )
        boot_id = f"{origin}:{kind}-{row.file_id}-{row.number}"
        test: dict[str, Any] = {
            "id": boot_id,
            "origin": origin,
            "build_id": build_id,
            "path": "boot",
            "status": _status(row.outcome),
            "misc": {"file": row.path, "boot": row.number, "format": row.format, **dict(row.meta)},
        }
        if row.reason:
            test["comment"] = row.reason
        platform = row.meta.get("model")
        if platform:
            test["environment"] = {"misc": {"platform": platform}}
        tests.append(test)
        for name, value in sorted(row.metrics.items()):
            tests.append(
                {
                    "id": f"{boot_id}.{name}",
                    "origin": origin,
                    "build_id": build_id,
                    "path": f"boot.{_safe(name)}",
                    "status": "DONE",
                    "number": {"value": float(value), "unit": unit_of(name)},
                }
            )
    return {
        "version": {"major": KCIDB_MAJOR, "minor": KCIDB_MINOR},
        "checkouts": list(checkouts.values()),
        "builds": list(builds.values()),
        "tests": tests,
    }


def _run_rows(store: Store, experiment: str) -> list[FleetRow]:
    """The measured boots of a stored run (its final attempts, no warm-ups) as fleet rows."""
    record = store.experiment(experiment)
    host = record.host.get("hostname") or record.host.get("host")
    rows = []
    for boot in store.boots(record.id):
        if boot.superseded or boot.warmup:
            continue
        meta = {"variant": boot.variant, "accel": boot.accel, "experiment": str(record.id)}
        if isinstance(host, str):
            meta["host"] = host
        metrics = {name: float(value) for name, value in boot.metrics.items() if value is not None}
        rows.append(
            FleetRow(
                file_id=record.id,
                path=f"run {record.id}",
                format="bootscope-run",
                number=boot.index,
                outcome=boot.outcome,
                reason=boot.reason,
                kernel_release=boot.kernel_release,
                meta=meta,
                metrics=metrics,
            )
        )
    return rows


def export_kcidb(store: Store, origin: str = "bootscope", experiment: str | None = None) -> dict[str, Any]:
    """Return stored boots as one KCIDB v5 document (see the module docstring): every imported
    fleet boot, or with ``experiment`` (an id or ``latest``) the measured boots of that run. Raises
    InputError for a bad origin or no boots, StoreError for a missing run or a database failure."""
    if not ORIGIN_RE.match(origin):
        raise InputError(f"--origin {origin!r}: KCIDB origins are lower-case letters, digits and _")
    if experiment is not None:
        rows = _run_rows(store, experiment)
        if not rows:
            raise InputError(f"run {experiment} has no measured boot")
        return kcidb_document(rows, origin, "run")
    rows = [row for chunk in iter_fleet_rows(store) for row in chunk]
    if not rows:
        raise InputError("no fleet boots stored: run `bootscope fleet import` first")
    return kcidb_document(rows, origin)


def structure_errors(document: Mapping[str, Any]) -> list[str]:
    """Return what in ``document`` breaks KCIDB v5's structure rules that bootscope relies on:
    the version, the required fields of each object, the id and origin patterns, the test path
    pattern, the status values, number objects, references between objects, and no nulls.
    Empty when it conforms. (A structural check, not a full JSON-Schema validation.)"""
    errors: list[str] = []
    version = document.get("version")
    if not isinstance(version, Mapping) or version.get("major") != KCIDB_MAJOR:
        errors.append("version.major must be 5")
    extra = set(document) - {"version", "checkouts", "builds", "tests", "issues", "incidents"}
    if extra:
        errors.append(f"unknown top-level keys {sorted(extra)}")
    ids: dict[str, set[str]] = {}
    for kind, required in REQUIRED.items():
        ids[kind] = set()
        for index, item in enumerate(document.get(kind, [])):
            where = f"{kind}[{index}]"
            for key in required:
                if key not in item:
                    errors.append(f"{where} lacks required '{key}'")
            origin = item.get("origin", "")
            if not ORIGIN_RE.match(str(origin)):
                errors.append(f"{where}.origin {origin!r} is not [a-z0-9_]+")
            if not str(item.get("id", "")).startswith(f"{origin}:"):
                errors.append(f"{where}.id does not start with its origin and ':'")
            ids[kind].add(str(item.get("id")))
            errors.extend(f"{where}.{key} is null" for key, value in item.items() if value is None)
    for index, build in enumerate(document.get("builds", [])):
        if build.get("checkout_id") not in ids["checkouts"]:
            errors.append(f"builds[{index}].checkout_id names no checkout")
    for index, test in enumerate(document.get("tests", [])):
        where = f"tests[{index}]"
        if test.get("build_id") not in ids["builds"]:
            errors.append(f"{where}.build_id names no build")
        if not TEST_PATH_RE.match(str(test.get("path", ""))):
            errors.append(f"{where}.path {test.get('path')!r} breaks the test path pattern")
        if "status" in test and test["status"] not in STATUSES:
            errors.append(f"{where}.status {test['status']!r} is not a KCIDB status")
        number = test.get("number")
        if number is not None and (
            not isinstance(number, Mapping)
            or not isinstance(number.get("value"), int | float)
            or set(number) - {"value", "unit", "prefix"}
        ):
            errors.append(f"{where}.number must be {{value, unit?, prefix?}} with a numeric value")
    return errors

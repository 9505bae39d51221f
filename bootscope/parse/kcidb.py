"""KCIDB v5 JSON (KernelCI's common report database, schema of kernelci/kcidb-io ``v05_*``): boot
results read as boots.

A document is ``{"version": {"major": 5, ...}, "checkouts": [...], "builds": [...], "tests": [...]}``;
a test links to its build by ``build_id``, a build to its checkout by ``checkout_id``. A boot is a
test whose ``path`` is ``boot`` (or ends in ``.boot``); its ``status`` gives the outcome (PASS and
DONE ok, FAIL and ERROR failed, MISS and SKIP not run). Its phases are the tests whose ``id`` is the
boot's ``id`` followed by ``.`` and a metric name, each with ``number: {"value", "unit"}`` (how
``bootscope export --format kcidb`` writes them). A boot without such numbers but with a
``log_excerpt`` holding a timed kernel log is analysed from that excerpt by the caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bootscope.errors import ParseError

MAJOR = 5
_OK = {"PASS", "DONE"}
_FAILED = {"FAIL", "ERROR"}


@dataclass(frozen=True, slots=True)
class KcidbBoot:
    """One boot test of a KCIDB document: its id, status, metric numbers found (name -> value in
    the unit the document gave, seconds for bootscope's own), metadata and log excerpt."""

    test_id: str
    status: str
    numbers: Mapping[str, float] = field(default_factory=dict)
    meta: Mapping[str, str] = field(default_factory=dict)
    log_excerpt: str = ""


def looks_like_kcidb(head: str) -> bool:
    """Return True when the start of a file looks like a KCIDB document (one JSON object with a
    ``version`` and ``tests``), not a journal export (one JSON object per line)."""
    text = head.lstrip()
    return text.startswith("{") and '"version"' in head and "__CURSOR" not in head and "MESSAGE" not in head


def outcome_of(status: str) -> str:
    """Return ``ok``, ``failed`` or ``not-run`` for a KCIDB status (an unknown one: ``failed``)."""
    if status in _OK:
        return "ok"
    if status in _FAILED:
        return "failed"
    return "not-run" if status in {"MISS", "SKIP"} else "failed"


def _is_boot(path: object) -> bool:
    return isinstance(path, str) and (path == "boot" or path.endswith(".boot"))


def _scalars(prefix: str, values: object) -> dict[str, str]:
    if not isinstance(values, Mapping):
        return {}
    return {
        prefix + str(key): str(value)
        for key, value in values.items()
        if isinstance(value, str | int | float) and not isinstance(value, bool)
    }


def read_kcidb(document: object) -> list[KcidbBoot]:
    """Return the boots of a parsed KCIDB v5 document, in document order.

    Metadata per boot: ``origin``, ``platform`` and ``environment`` (the test's environment comment
    and misc fields), ``arch`` and ``config`` (its build), ``kernel`` and ``tree`` (its checkout's
    ``git_commit_name`` and ``tree_name``), and the test's own ``misc`` scalars by name.
    Raises ParseError for a document that is not KCIDB v5 or holds no boot test."""
    if not isinstance(document, Mapping):
        raise ParseError("not a KCIDB document: the JSON is not an object")
    version = document.get("version")
    if not isinstance(version, Mapping) or version.get("major") != MAJOR:
        raise ParseError(f"not a KCIDB v{MAJOR} document (its version is {version!r})")
    checkouts = {c.get("id"): c for c in _objects(document, "checkouts")}
    builds = {b.get("id"): b for b in _objects(document, "builds")}
    tests = _objects(document, "tests")
    numbers: dict[str, dict[str, float]] = {}
    for test in tests:
        test_id, number = test.get("id"), test.get("number")
        if isinstance(test_id, str) and "." in test_id and isinstance(number, Mapping):
            parent, _, metric = test_id.rpartition(".")
            value = number.get("value")
            if isinstance(value, int | float) and not isinstance(value, bool):
                numbers.setdefault(parent, {})[metric] = float(value)
    boots = []
    for test in tests:
        if not _is_boot(test.get("path")) or not isinstance(test.get("id"), str):
            continue
        build = builds.get(test.get("build_id"), {})
        checkout = checkouts.get(build.get("checkout_id"), {})
        found_env = test.get("environment")
        environment: Mapping[str, Any] = found_env if isinstance(found_env, Mapping) else {}
        meta: dict[str, str] = {"origin": str(test.get("origin", ""))}
        meta.update(_scalars("", {"arch": build.get("architecture"), "config": build.get("config_name")}))
        meta.update(
            _scalars("", {"kernel": checkout.get("git_commit_name"), "tree": checkout.get("tree_name")})
        )
        meta.update(_scalars("", {"environment": environment.get("comment")}))
        meta.update(_scalars("", environment.get("misc")))
        meta.update(_scalars("", test.get("misc")))
        excerpt = test.get("log_excerpt")
        boots.append(
            KcidbBoot(
                test_id=str(test["id"]),
                status=str(test.get("status", "")),
                numbers=numbers.get(str(test["id"]), {}),
                meta=meta,
                log_excerpt=excerpt if isinstance(excerpt, str) else "",
            )
        )
    if not boots:
        raise ParseError("the KCIDB document holds no boot test (a test with path 'boot')")
    return boots


def _objects(document: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    items = document.get(key, [])
    if not isinstance(items, list):
        raise ParseError(f"KCIDB '{key}' is not a list")
    return [item for item in items if isinstance(item, Mapping)]

"""``bootscope check RUN --against DIR``: the reference whose fingerprint is the run's.

A directory of reference files (``baseline save``, one per machine and configuration) is searched for
those saved from a stored run whose fingerprint (``usecases/watch/series.py``: machine, CPU, cores,
QEMU, accelerator, workload, the variant's options but its kernel, bootscope's version, the run's
``--meta`` labels) equals the checked run's; the newest such file is used. When none matches, the
check is refused, naming the closest file and the fields that differ: a reference of another machine
or command line would call its difference a regression.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bootscope.errors import InputError
from bootscope.store import Store
from bootscope.usecases.diff import split_run
from bootscope.usecases.watch.series import differing_fields, fingerprint_of

SHOWN_FIELDS = 3


@dataclass(frozen=True, slots=True)
class Picked:
    """The reference file chosen for a run, and a note saying why."""

    path: Path
    note: str


def _reference_fingerprint(document: Mapping[str, Any]) -> dict[str, str] | None:
    """The fingerprint of a reference saved from a stored run; None for one saved from logs."""
    machine = document.get("machine")
    if not isinstance(machine, Mapping) or "variant" not in machine:
        return None
    host = _mapping(machine.get("host"))
    config = _mapping(machine.get("variant"))
    meta = {key: str(value) for key, value in _mapping(machine.get("meta")).items()}
    accel, workload = str(machine.get("accel", "")), str(machine.get("workload", "boot"))
    return fingerprint_of(host, accel, workload, config, meta)


def _mapping(value: object) -> dict[str, Any]:
    return {str(k): v for k, v in value.items()} if isinstance(value, Mapping) else {}


def run_fingerprint_of(store: Store, run_text: str) -> tuple[str, dict[str, str]]:
    """Return (``RUN:VARIANT`` shown, fingerprint) of a stored run's variant (its only one when not
    named). Raises InputError for a run of several variants without one named, StoreLookupError."""
    run, variant = split_run(run_text)
    record = store.experiment(run)
    names = [v.name for v in record.variants]
    if variant is None:
        if len(names) != 1:
            raise InputError(
                f"run {record.id} has variants {', '.join(names)}: name one ({record.id}:{names[0]})"
            )
        variant = names[0]
    config = next((v.config for v in record.variants if v.name == variant), None)
    if config is None:
        raise InputError(f"run {record.id} has no variant {variant!r} (it has {', '.join(names)})")
    workload = str(record.plan.get("workload", "boot"))
    return f"{record.id}:{variant}", fingerprint_of(record.host, record.accel, workload, config, record.meta)


def pick_reference(directory: Path, store: Store, run_text: str) -> Picked:
    """Return the newest reference file in ``directory`` whose fingerprint is that of stored run
    ``run_text`` (``RUN[:VARIANT]``). Raises InputError when none matches (naming the closest file
    and the fields that differ) or the directory holds no reference saved from a run."""
    shown, wanted = run_fingerprint_of(store, run_text)
    candidates: list[tuple[Path, dict[str, str]]] = []
    for path in sorted(directory.glob("*.json")):
        try:
            document = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        fingerprint = _reference_fingerprint(document) if isinstance(document, Mapping) else None
        if fingerprint is not None:
            candidates.append((path, fingerprint))
    if not candidates:
        raise InputError(
            f"{directory} holds no reference saved from a stored run (baseline save RUN:VARIANT)"
        )
    matching = [path for path, fingerprint in candidates if not differing_fields(fingerprint, wanted)]
    if matching:
        newest = max(matching, key=lambda p: (p.stat().st_mtime, p.name))
        return Picked(
            newest, f"reference {newest.name}: its fingerprint is run {shown}'s ({len(matching)} match)"
        )
    closest, fingerprint = min(candidates, key=lambda c: (len(differing_fields(c[1], wanted)), c[0].name))
    fields = differing_fields(fingerprint, wanted)
    shown_fields = "; ".join(
        f"{field} {fingerprint.get(field, '-')[:40]!r} there, {wanted.get(field, '-')[:40]!r} here"
        for field in fields[:SHOWN_FIELDS]
    )
    more = f" and {len(fields) - SHOWN_FIELDS} more" if len(fields) > SHOWN_FIELDS else ""
    raise InputError(
        f"no reference in {directory} was measured like run {shown}: the closest, {closest.name}, differs in"
        f" {shown_fields}{more}"
    )

"""The reference file of ``baseline save``: built from a stored variant or from log files, read
back by ``check``, and what it can prove (its resolution).

The file (JSON, ``"format": "bootscope-reference"``, ``"version": 1``; described in
docs/reference-file.md) holds every metric's samples (s) and every component's samples (s, one value
per boot that has it), the kernel and machine they came from, the method, and per metric what a
check of as many boots can resolve (``"resolution"``, from ``bootscope.stats.resolution``; ``check``
computes it again for the boots it gets, so a file without it is read the same). Samples, not a
summary: the rank tests ``check`` runs need them, and a few hundred boots of a few hundred
initcalls is small. The rule ``check`` applies is :mod:`bootscope.usecases.check_rule`'s.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bootscope import __version__
from bootscope.analyze.components import KINDS
from bootscope.analyze.like_for_like import BootFacts
from bootscope.errors import InputError
from bootscope.metrics import EXPORT_METRICS
from bootscope.stats.resolution import DEFAULT_POWER, boots_needed, resolution
from bootscope.usecases.diff import BootParts, component_samples

if TYPE_CHECKING:
    from bootscope.store import Store

FORMAT = "bootscope-reference"
VERSION = 1
METHOD = (
    "total: Mann-Whitney test of (new - margin) against the reference samples (bisect-run's "
    "decision), margin = max(threshold x reference median, the resolution of the reference for "
    "the boots checked); components: the same test with margin max(threshold x their median, "
    "min_shift), p-values Benjamini-Hochberg adjusted"
)


@dataclass(frozen=True, slots=True)
class Reference:
    """A loaded reference: samples per metric (s), per component kind and name (s), where they
    came from (run, variant, kernel releases, machine), the whole document, and per boot what shaped
    its time besides the kernel (for the like-for-like guard; empty in files written before)."""

    metrics: Mapping[str, tuple[float, ...]]
    components: Mapping[tuple[str, str], tuple[float, ...]]
    document: Mapping[str, Any]
    facts: tuple[BootFacts, ...] = ()


@dataclass(frozen=True, slots=True)
class Reach:
    """What a reference of ``boots`` samples of ``metric`` (median ``median_s``) can prove in a
    check of ``check_boots`` new boots at ``alpha``: ``resolution_s`` is the smallest margin such a
    check resolves (an unchanged kernel passes ``power`` of the time; None: none at these sizes),
    ``margin_s`` the margin it then uses (the larger of that and ``threshold`` x the median),
    ``catches_s`` the slowdown it flags ``power`` of the time (None without a resolution), and
    ``boots_for_threshold`` the new boots that would resolve the threshold itself (None: no
    number of boots would, the reference is too small or too noisy)."""

    metric: str
    boots: int
    median_s: float
    check_boots: int
    threshold: float
    threshold_s: float
    resolution_s: float | None
    margin_s: float
    catches_s: float | None
    boots_for_threshold: int | None
    alpha: float
    power: float


def reach(
    metric: str,
    samples: Sequence[float],
    check_boots: int,
    threshold: float,
    alpha: float,
    power: float = DEFAULT_POWER,
) -> Reach:
    """Return what ``samples`` (s, 2 or more) can prove in a check of ``check_boots`` boots at
    ``threshold`` (a fraction of the median) and ``alpha`` (see :class:`Reach`). Raises StatsError
    for fewer than 2 samples or boots, or a value that is not finite."""
    median_s = float(np.median(samples))
    threshold_s = threshold * abs(median_s)
    resolved = resolution(samples, check_boots, alpha, power)
    margin_s = max(threshold_s, resolved or 0.0)
    return Reach(
        metric=metric,
        boots=len(samples),
        median_s=median_s,
        check_boots=check_boots,
        threshold=threshold,
        threshold_s=threshold_s,
        resolution_s=resolved,
        margin_s=margin_s,
        catches_s=None if resolved is None else margin_s + resolved,
        boots_for_threshold=boots_needed(samples, threshold_s, alpha, power),
        alpha=alpha,
        power=power,
    )


def reach_document(found: Reach) -> dict[str, Any]:
    """Return ``found`` as the reference file holds it (times in s, counts in boots)."""
    return {
        "check_boots": found.check_boots,
        "threshold": found.threshold,
        "threshold_s": found.threshold_s,
        "resolution_s": found.resolution_s,
        "margin_s": found.margin_s,
        "catches_s": found.catches_s,
        "boots_for_threshold": found.boots_for_threshold,
        "alpha": found.alpha,
        "power": found.power,
    }


def build_reference(
    *,
    source: Mapping[str, Any],
    machine: Mapping[str, Any],
    metrics: Mapping[str, Sequence[float]],
    parts: Sequence[BootParts],
    threshold: float,
    alpha: float,
) -> dict[str, Any]:
    """Return the reference document of the boots ``parts`` (their components) whose metrics are
    ``metrics`` (s per boot), with ``source`` and ``machine`` as given, and per metric of 2 or
    more samples its resolution for a check of as many boots at ``threshold`` and ``alpha``.
    Raises InputError for fewer than 2 boots."""
    if len(parts) < 2:
        raise InputError(f"{len(parts)} boot(s); a reference needs 2 or more")
    components: dict[str, dict[str, list[float]]] = {}
    for item in component_samples(parts, ()):
        components.setdefault(item.kind, {})[item.name] = list(item.a)
    kept = {name: list(values) for name, values in metrics.items() if values}
    return {
        "format": FORMAT,
        "version": VERSION,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "bootscope": __version__,
        "source": dict(source),
        "kernel": {"releases": sorted({b.kernel for b in parts if b.kernel})},
        "machine": dict(machine),
        "method": METHOD,
        "unit": "s",
        "metrics": kept,
        "resolution": {
            name: reach_document(reach(name, values, len(values), threshold, alpha))
            for name, values in kept.items()
            if len(values) >= 2
        },
        "facts": [asdict(p.facts) for p in parts if p.facts is not None],
        "components": components,
    }


def run_reference(
    store: Store, run: str, variant: str | None, parts: Sequence[BootParts], *, threshold: float, alpha: float
) -> dict[str, Any]:
    """Return the reference document of ``variant`` of stored run ``run`` whose boots are ``parts``
    (from ``parts_from_run``): metrics from the store, components from the analysis (see
    :func:`build_reference`). Raises StoreLookupError for an unknown run, InputError for fewer than
    2 boots."""
    record = store.experiment(run)
    if len(parts) < 2:
        raise InputError(f"run {record.id} variant {variant}: {len(parts)} ok boot(s); a reference needs 2")
    chosen = variant or record.variants[0].name
    config = next((dict(v.config) for v in record.variants if v.name == chosen), {})
    metrics = {metric: store.samples(record.id, metric).get(chosen, []) for metric in EXPORT_METRICS}
    return build_reference(
        source={"run": record.id, "variant": chosen, "boots": len(parts)},
        machine={
            "variant": config,
            "accel": record.accel,
            "host": dict(record.host),
            "workload": str(record.plan.get("workload", "boot")),
            "meta": dict(record.meta),
        },
        metrics=metrics,
        parts=parts,
        threshold=threshold,
        alpha=alpha,
    )


def _floats(values: object, where: str) -> tuple[float, ...]:
    if not isinstance(values, list) or not all(isinstance(v, int | float) for v in values):
        raise InputError(f"{where}: expected a list of numbers")
    result = tuple(float(v) for v in values)
    if not all(math.isfinite(v) for v in result):
        raise InputError(f"{where}: holds a value that is not finite")
    return result


def load_reference(path: Path) -> Reference:
    """Return the reference stored in ``path``. Raises InputError for a file that cannot be read,
    is not JSON, is not a bootscope reference, has another version or holds malformed samples."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise InputError(f"{path}: cannot read ({error.strerror or error})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"{path}: not a JSON reference file ({error})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InputError(f'{path}: not a bootscope reference (no "format": "{FORMAT}")')
    if document.get("version") != VERSION:
        raise InputError(
            f"{path}: reference version {document.get('version')!r}; this bootscope reads {VERSION}"
        )
    raw_metrics, raw_components = document.get("metrics"), document.get("components")
    if not isinstance(raw_metrics, dict) or not isinstance(raw_components, dict):
        raise InputError(f'{path}: "metrics" and "components" must be objects')
    metrics = {str(name): _floats(values, f"{path}: metrics.{name}") for name, values in raw_metrics.items()}
    components: dict[tuple[str, str], tuple[float, ...]] = {}
    for kind, by_name in raw_components.items():
        if kind not in KINDS or not isinstance(by_name, dict):
            raise InputError(f"{path}: components.{kind}: unknown kind (known: {', '.join(KINDS)})")
        for name, values in by_name.items():
            components[(kind, str(name))] = _floats(values, f"{path}: components.{kind}.{name}")
    return Reference(metrics, components, document, _facts(document.get("facts")))


def _facts(raw: object) -> tuple[BootFacts, ...]:
    """Return the boots' facts of a reference file; anything malformed is left out (the guard then
    compares less, as for a file written before the facts were kept)."""
    if not isinstance(raw, list):
        return ()
    names = {field.name for field in fields(BootFacts)}
    return tuple(
        BootFacts(**{k: v for k, v in item.items() if k in names}) for item in raw if isinstance(item, dict)
    )

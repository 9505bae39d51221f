"""Reference values for CI: ``baseline save`` writes a stored variant's samples to a file, ``check``
compares new boots with it and answers with an exit code.

The reference file (JSON, ``"format": "bootscope-reference"``, ``"version": 1``; described in
docs/reference-file.md) holds every metric's samples (s) and every component's samples (s, one value
per boot that has it), the kernel and machine they came from, and the method. Samples, not a summary:
the rank tests ``check`` runs need them, and a few hundred boots of a few hundred initcalls is small.

``check`` decides with bisect-run's rule (``bootscope.stats.decision.decide``): the total is bad when
it is slower than the reference by more than the threshold (a fraction of the reference median),
good when it is provably not, unknown otherwise. Each component asks the same "bad" question with a
margin of at least ``min_shift_s``; their p-values are Benjamini-Hochberg adjusted, since hundreds of
components are hundreds of chances of a false alarm. A component absent from the reference that now
takes more than the total's margin is a regression too.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from bootscope import __version__
from bootscope.analyze.components import KINDS
from bootscope.errors import InputError, StatsError
from bootscope.metrics import EXPORT_METRICS
from bootscope.stats.decision import BAD, GOOD, UNKNOWN, BisectDecision, decide
from bootscope.stats.multiple import benjamini_hochberg
from bootscope.usecases.diff import BootParts, component_samples

if TYPE_CHECKING:
    from bootscope.store import Store

FORMAT = "bootscope-reference"
VERSION = 1
EXIT_PASS, EXIT_REGRESSION, EXIT_CANNOT_TELL = 0, 1, 125
METHOD = (
    "per metric and component: Mann-Whitney test of (new - margin) against the reference samples, "
    "margin = max(threshold x reference median, min_shift) (bisect-run's decision); components' "
    "p-values Benjamini-Hochberg adjusted; components from the one stored-boot analysis"
)
POWER_TARGET = 0.8
_POWER_REPLICATES = 200


@dataclass(frozen=True, slots=True)
class Reference:
    """A loaded reference: samples per metric (s), per component kind and name (s), where they
    came from (run, variant, kernel releases, machine) and the whole document."""

    metrics: Mapping[str, tuple[float, ...]]
    components: Mapping[tuple[str, str], tuple[float, ...]]
    document: Mapping[str, Any]


def reference_document(
    store: Store, run: str, variant: str | None, parts: Sequence[BootParts]
) -> dict[str, Any]:
    """Return the reference document of ``variant`` of stored run ``run`` whose boots are ``parts``
    (from ``parts_from_run``): metrics from the store, components from the analysis. Raises
    StoreError for an unknown run, InputError for fewer than 2 boots."""
    record = store.experiment(run)
    if len(parts) < 2:
        raise InputError(f"run {record.id} variant {variant}: {len(parts)} ok boot(s); a reference needs 2")
    chosen = variant or record.variants[0].name
    config = next((dict(v.config) for v in record.variants if v.name == chosen), {})
    metrics = {
        metric: values[chosen]
        for metric in EXPORT_METRICS
        if (values := store.samples(record.id, metric)).get(chosen)
    }
    components: dict[str, dict[str, list[float]]] = {}
    for item in component_samples(parts, ()):
        components.setdefault(item.kind, {})[item.name] = list(item.a)
    return {
        "format": FORMAT,
        "version": VERSION,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "bootscope": __version__,
        "source": {"run": record.id, "variant": chosen, "boots": len(parts)},
        "kernel": {"releases": sorted({b.kernel for b in parts if b.kernel})},
        "machine": {"variant": config, "accel": record.accel, "host": dict(record.host)},
        "method": METHOD,
        "unit": "s",
        "metrics": metrics,
        "components": components,
    }


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
    return Reference(metrics, components, document)


@dataclass(frozen=True, slots=True)
class CheckFinding:
    """One regression: the component (kind ``total`` for the metric itself), its decision and, for
    components, the Benjamini-Hochberg q of its "bad" test (None for the total or a new component)."""

    kind: str
    name: str
    decision: BisectDecision | None
    q_bad: float | None
    new_median_s: float | None = None


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The answer of ``check``: exit code (0 pass, 1 regression, 125 cannot tell), the total's
    decision (None when fewer than 2 new boots reached the metric), the regressions found, how many
    boots were checked, how many more the total would need (None when it is not a question of boots
    or even many more would not settle it), and a one-line message."""

    metric: str
    exit_code: int
    total: BisectDecision | None
    regressions: tuple[CheckFinding, ...]
    components_checked: int
    n_new: int
    more_boots: int | None
    message: str


def _more_boots(
    reference: Sequence[float], new: Sequence[float], threshold: float, alpha: float
) -> int | None:
    """Return how many more new boots would settle the total with 80 % probability, by resampling
    the new boots (seeded); None when even 8 times as many would not."""
    rng = np.random.default_rng(0)
    pool = np.asarray(new, dtype=np.float64)
    n = len(new)
    size = n + 1
    while size <= max(8 * n, 16):
        decided = 0
        for _ in range(_POWER_REPLICATES):
            drawn = rng.choice(pool, size=size, replace=True)
            decided += decide(reference, list(drawn), threshold, alpha).verdict != UNKNOWN
        if decided >= POWER_TARGET * _POWER_REPLICATES:
            return size - n
        size = max(size + 1, int(size * 1.25))
    return None


def check_boots(
    reference: Reference,
    boots: Sequence[BootParts],
    *,
    metric: str,
    threshold: float,
    alpha: float,
    min_shift_s: float,
) -> CheckResult:
    """Return the verdict on ``boots`` against ``reference`` for ``metric`` and every component both
    have (see the module's rule). Raises InputError when the reference has no (or too few) samples
    of ``metric``."""
    ref_total = reference.metrics.get(metric, ())
    if len(ref_total) < 2:
        raise InputError(f"the reference holds {len(ref_total)} sample(s) of {metric}; it needs 2 or more")
    new_total = [b.total_s for b in boots if b.total_s is not None]
    total: BisectDecision | None = None
    if len(new_total) >= 2:
        total = decide(ref_total, new_total, threshold, alpha)
    new_components: dict[tuple[str, str], list[float]] = {}
    for boot in boots:
        for key, value in boot.components.items():
            new_components.setdefault(key, []).append(value)
    tested: list[tuple[tuple[str, str], BisectDecision]] = []
    for key, ref_values in reference.components.items():
        values = new_components.get(key, [])
        if len(ref_values) >= 2 and len(values) >= 2:
            try:
                tested.append((key, decide(ref_values, values, threshold, alpha, min_margin=min_shift_s)))
            except StatsError:
                continue
    q_bad = benjamini_hochberg([decision.p_bad for _, decision in tested])
    findings: list[CheckFinding] = []
    if total is not None and total.verdict == BAD:
        findings.append(CheckFinding("total", metric, total, None, float(np.median(new_total))))
    for (key, decision), q in zip(tested, q_bad, strict=True):
        if q is not None and q < alpha:
            findings.append(CheckFinding(key[0], key[1], decision, q, float(np.median(new_components[key]))))
    # A component the reference never had, now costing more than the total's margin on its own.
    total_margin = threshold * abs(float(np.median(ref_total)))
    for key, values in new_components.items():
        if key not in reference.components and len(values) >= 2:
            median = float(np.median(values))
            if median > max(total_margin, min_shift_s):
                findings.append(CheckFinding(key[0], key[1], None, None, median))
    findings.sort(
        key=lambda f: (f.kind != "total", -(f.decision.shift if f.decision else f.new_median_s or 0))
    )
    more = None
    if findings:
        code = EXIT_REGRESSION
        named = ", ".join(f"{f.kind} {f.name}" for f in findings[:5])
        message = f"regression: {named}" + (f" and {len(findings) - 5} more" if len(findings) > 5 else "")
    elif total is not None and total.verdict == GOOD:
        code = EXIT_PASS
        message = (
            f"pass: {metric} and {len(tested)} components not slower than the reference beyond the threshold"
        )
    else:
        code = EXIT_CANNOT_TELL
        if total is None:
            more = 2 - len(new_total)
            message = f"cannot tell: {len(new_total)} boot(s) reached {metric}; at least {more} more needed"
        else:
            more = _more_boots(ref_total, new_total, threshold, alpha)
            needed = f"about {more} more boots would settle it" if more else "many more boots are needed"
            message = f"cannot tell with {len(new_total)} boots: {needed}"
    return CheckResult(metric, code, total, tuple(findings), len(tested), len(new_total), more, message)

"""The numbers ``compare`` compares, from wherever they are: typed lists, files of numbers, boot logs
(files, directories or globs; each boot analyzed), or the variants of a stored run.

Below the CLI so that the command only parses options, calls one of these and renders; warnings
(a log skipped, boots without the metric) come back in the result, for the caller to print.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bootscope.errors import BootscopeError, InputError

if TYPE_CHECKING:  # sqlalchemy: the CLI imports this module at start-up
    from bootscope.store import Store


@dataclass(frozen=True, slots=True)
class LogValues:
    """A metric of every boot in one side's logs (seconds, in the order the files were named), and the
    warnings for the user: files that could not be read, boots that did not state the metric."""

    values: tuple[float, ...]
    warnings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RunValues:
    """A stored run's ok samples of one metric (seconds) per variant, the baseline variant first."""

    run: int
    baseline: str
    samples: dict[str, list[float]]


def parse_numbers(text: str, origin: str) -> list[float]:
    """Return the numbers of a comma/space separated list or a file's text (``#`` starts a comment;
    a trailing ``s`` is allowed). Raises InputError naming the first item that is not a finite number.
    """
    values: list[float] = []
    for line_no, line in enumerate(text.splitlines(), 1):
        for item in re.split(r"[,\s]+", line.split("#", 1)[0].strip()):
            if not item:
                continue
            try:
                value = float(item.rstrip("s"))
            except ValueError:
                raise InputError(f"{origin}:{line_no}: {item[:40]!r} is not a number") from None
            if not math.isfinite(value):
                raise InputError(f"{origin}:{line_no}: {item[:40]!r} is not a finite number")
            values.append(value)
    return values


def read_numbers(path: Path) -> list[float]:
    """Return the numbers in the file ``path`` (see :func:`parse_numbers`); raises InputError if the
    file cannot be read or holds something that is not a number."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise InputError(f"{path}: cannot read ({error.strerror or error})") from None
    return parse_numbers(text, str(path))


def values_from_logs(paths: Sequence[Path], metric: str) -> LogValues:
    """Return ``metric`` (seconds) of every boot in the logs that ``paths`` name (log files,
    directories of logs, ``-`` or globs, read as :func:`bootscope.sources.paths.log_files` reads
    them, in that order), each boot analyzed as ``analyze`` does. Raises InputError for a path that
    names no file, or when no boot states the metric."""
    from bootscope.analyze import analyze_boot  # the analysis stack: only when logs are compared
    from bootscope.parse import parse_log
    from bootscope.sources.files import read_text_lines
    from bootscope.sources.paths import log_files

    where = ", ".join(str(p) for p in paths)
    values: list[float] = []
    warnings: list[str] = []
    missing = 0
    for path in log_files(paths):
        try:
            boots = parse_log(read_text_lines(str(path))).boots
        except BootscopeError as error:
            warnings.append(f"{path}: skipped: {error}")
            continue
        for lines in boots:
            value = getattr(analyze_boot(lines).metrics, metric)
            if value is None:
                missing += 1
            else:
                values.append(float(value))
    if missing:
        warnings.append(f"{where}: {missing} boot(s) without {metric}, left out")
    if not values:
        raise InputError(f"{where}: no log there states {metric}")
    return LogValues(tuple(values), tuple(warnings))


def values_from_run(store: Store, run: str, metric: str, baseline: str | None) -> RunValues:
    """Return the ok samples of ``metric`` per variant of the stored run ``run`` (an id or
    ``latest``), ``baseline`` (default: the first variant) first. ``unit:NAME`` is a unit's
    activation time (s), read from each boot's console through the one stored-boot analysis. Raises
    InputError for a run with fewer than two variants, an unknown baseline or no sample at all;
    StoreError for an unknown run."""
    from bootscope.metrics import unit_metric

    record = store.experiment(run)
    try:
        unit = unit_metric(metric)
    except ValueError as error:
        raise InputError(str(error)) from None
    samples = store.samples(record.id, metric) if unit is None else unit_samples(store, record.id, unit)
    names = [v.name for v in record.variants] or list(samples)
    if len(names) < 2:
        raise InputError(f"run {record.id} has {len(names)} variant(s); compare needs two or more")
    base = baseline or names[0]
    if base not in names:
        raise InputError(f"variant {base!r} is not in run {record.id} (variants: {', '.join(names)})")
    if not any(samples.get(name) for name in names):
        raise InputError(f"no ok boot of run {record.id} reached {metric}")
    ordered = {base: samples.get(base, [])} | {n: samples.get(n, []) for n in names if n != base}
    return RunValues(record.id, base, ordered)


def unit_samples(store: Store, run: int, unit: str) -> dict[str, list[float]]:
    """Return variant -> ``unit``'s activation time (s on systemd's clock: activating to active, or to
    inactive again for a oneshot that ran and exited, ``UnitSpan.activation_s``)
    in each ok, final, measured boot of ``run`` whose collector printed it, in run order. Every
    variant is a key. Raises StoreError for an unknown run."""
    from bootscope.analyze.stored import analyze_stored_boot  # the analysis stack: only for unit metrics

    record = store.experiment(run)
    boots = store.boots(record.id)
    result: dict[str, list[float]] = {variant.name: [] for variant in record.variants}
    for boot in boots:
        if not boot.counts:
            continue
        analysis = analyze_stored_boot(store, record.id, boot.index, records=boots).analysis
        took = next((u.activation_s for u in analysis.units if u.unit == unit), None)
        if took is not None:
            result.setdefault(boot.variant, []).append(took)
    return result

"""``bootscope baseline save`` and ``bootscope check``: reference values saved from a stored variant,
and new boots (a stored ``RUN[:VARIANT]`` or log files) checked against them, with CI's exit code
(0 pass, 1 regression, 125 cannot tell) in the result. The statistics are
:mod:`bootscope.usecases.reference`'s."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bootscope.errors import InputError
from bootscope.metrics import DEFAULT_METRIC, definition
from bootscope.usecases.diff import parts_from_logs, run_variant_parts, split_run

if TYPE_CHECKING:  # numpy: only when a reference is made or read
    from bootscope.usecases.reference import CheckResult


@dataclass(frozen=True, slots=True)
class SavedBaseline:
    """A reference document (see :mod:`bootscope.usecases.reference`), the variant it holds and the
    number of boots in it."""

    document: Mapping[str, Any]
    variant: str
    boots: int


def save_baseline(source: str, db: str) -> SavedBaseline:
    """Return the reference document of the stored ``RUN[:VARIANT]`` ``source`` in ``db``: every
    metric, and every component (the userspace phases and systemd's units too: ``check --metric``
    picks those that decompose the metric it checks). Raises InputError for a missing or unknown
    variant or fewer than 2 boots, StoreError for an unknown run."""
    from bootscope.store import Store  # sqlalchemy: only when run
    from bootscope.usecases.reference import reference_document

    with Store.open(db) as store:
        variant, parts = run_variant_parts(store, source, DEFAULT_METRIC, every_component=True)
        document = reference_document(store, split_run(source)[0], variant, parts)
    return SavedBaseline(document, variant, len(parts))


def check(
    inputs: Sequence[str],
    against: Path,
    *,
    threshold: str,
    min_shift: str,
    metric: str,
    alpha: float,
    db: str,
    warn: Callable[[str], None],
) -> CheckResult:
    """Return the verdict on new boots against the reference file ``against``: ``inputs`` is one
    stored ``RUN[:VARIANT]`` (in ``db``; a name that is no file), or log files and directories.
    ``threshold`` (5% or 0.05) is the slowdown that counts as a regression, ``min_shift`` (1ms) the
    smallest shift a component must exceed; log files skipped go to ``warn``, one line each. The
    result's ``exit_code`` is the command's (0 pass, 1 regression, 125 cannot tell). Raises
    InputError for an unknown metric, a bad threshold or shift, an unreadable reference or log,
    ParseError for a log with no timestamp, StoreError for an unknown run."""
    from bootscope.amounts import parse_amount
    from bootscope.usecases.bisect import parse_threshold
    from bootscope.usecases.reference import check_boots, load_reference

    definition(metric)
    fraction = parse_threshold(threshold)
    floor_s, relative = parse_amount(min_shift, "s", "--min-shift")
    if floor_s is None or relative is not None or floor_s < 0:
        raise InputError("--min-shift must be an amount such as 1ms, not a percentage")
    reference = load_reference(against)
    paths = [Path(item) for item in inputs]
    if len(inputs) == 1 and not paths[0].exists() and inputs[0] != "-":
        from bootscope.store import Store

        with Store.open(db) as store:
            _, boots = run_variant_parts(store, inputs[0], metric)
    else:
        boots, warnings = parts_from_logs(paths, metric, strict=True)
        for line in warnings:
            warn(line)
    return check_boots(reference, boots, metric=metric, threshold=fraction, alpha=alpha, min_shift_s=floor_s)

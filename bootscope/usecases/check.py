"""``bootscope baseline save`` and ``bootscope check``: reference values saved from a stored variant
or from log files, and new boots (a stored ``RUN[:VARIANT]`` or log files) checked against them, with
CI's exit code (0 pass, 1 regression, 125 cannot tell) in the result. The file is
:mod:`bootscope.usecases.reference`'s, the rule :mod:`bootscope.usecases.check_rule`'s."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bootscope.errors import InputError
from bootscope.metrics import DEFAULT_METRIC, EXPORT_METRICS, definition
from bootscope.usecases.diff import BootParts, parts_from_logs, run_variant_parts, split_run

if TYPE_CHECKING:  # numpy: only when a reference is made or read
    from bootscope.usecases.check_rule import CheckResult
    from bootscope.usecases.reference import Reach


@dataclass(frozen=True, slots=True)
class SavedBaseline:
    """A reference document (see :mod:`bootscope.usecases.reference`), what it was made from (``run
    1 variant smp1`` or ``12 log boots``), the number of boots in it, and what it can prove for
    ``metric`` (None when fewer than 2 boots reached that metric)."""

    document: Mapping[str, Any]
    source: str
    boots: int
    metric: str
    reach: Reach | None


def is_stored_run(inputs: Sequence[str]) -> bool:
    """Return whether ``inputs`` names one stored ``RUN[:VARIANT]``: a single word that is no file,
    no directory and not ``-`` (stdin); otherwise they are log files and directories."""
    return len(inputs) == 1 and inputs[0] != "-" and not Path(inputs[0]).exists()


def _log_files(path: Path) -> list[Path]:
    """Return ``path`` or, for a directory, its files in name order (dot files left out); raises
    InputError when it is neither."""
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
    if path.is_file() or str(path) == "-":
        return [path]
    raise InputError(f"{path}: no such file or directory")


def _boots_of_logs(paths: Sequence[Path]) -> tuple[list[BootParts], dict[str, list[float]], dict[str, Any]]:
    """Return every boot of the log files and directories ``paths`` with every component (kernel and
    userspace), every export metric's values over them (s, boots that reached it), and what the logs
    say of the machine (CPUs, architecture, memory, command lines). Raises InputError for a file
    that cannot be read or no boot at all, ParseError for a log with no timestamp."""
    from bootscope.analyze import analyze_boot
    from bootscope.analyze.components import boot_components, top_gap_names
    from bootscope.analyze.like_for_like import facts_from_identity
    from bootscope.analyze.systemd import systemd_accounting
    from bootscope.parse import parse_log
    from bootscope.sources.files import read_text_lines
    from bootscope.usecases.diff import GAPS_PER_BOOT

    found: list[BootParts] = []
    metrics: dict[str, list[float]] = {name: [] for name in EXPORT_METRICS}
    seen: dict[str, set[Any]] = {"cpus": set(), "arch": set(), "memory_kb": set(), "cmdline": set()}
    for file in (file for path in paths for file in _log_files(path)):
        parsed = parse_log(read_text_lines(str(file)))
        for number, lines in enumerate(parsed.boots, start=1):
            breakdown = analyze_boot(lines, top_n=GAPS_PER_BOOT)
            accounting = systemd_accounting(lines)
            parts = boot_components(breakdown, accounting.units if accounting else (), lines=lines)
            for name, values in metrics.items():
                if (value := getattr(breakdown.metrics, name, None)) is not None:
                    values.append(float(value))
            for key, values_seen in seen.items():
                if (said := getattr(breakdown.identity, key, None)) is not None:
                    values_seen.add(said)
            label = file.name if len(parsed.boots) == 1 else f"{file.name} boot {number}"
            total = getattr(breakdown.metrics, DEFAULT_METRIC, None)
            release = breakdown.identity.release
            facts = facts_from_identity(breakdown.identity)
            found.append(BootParts(total, parts, release, label, top_gap_names(breakdown), facts))
    if not found:
        raise InputError(f"no boot found in {', '.join(str(p) for p in paths)}")
    machine = {"from": "logs", **{key: sorted(values) for key, values in seen.items()}}
    return found, metrics, machine


def save_baseline(
    inputs: Sequence[str],
    db: str,
    *,
    threshold: str = "5%",
    alpha: float,
    metric: str = DEFAULT_METRIC,
) -> SavedBaseline:
    """Return the reference document of the stored ``RUN[:VARIANT]`` in ``db`` (``inputs`` one word
    that is no file) or of the boots in log files and directories: every metric and every component
    (the userspace phases and systemd's units too: ``check --metric`` picks those that decompose the
    metric it checks), with what it can prove at ``threshold`` (5% or 0.05) and ``alpha``, and that
    summary for ``metric``. Raises InputError for a missing or unknown variant, fewer than 2 boots,
    a bad threshold, an unreadable log or no boot in the logs; ParseError for a log with no
    timestamp; StoreLookupError for a missing store or an unknown run (exit 2)."""
    from bootscope.usecases.bisect import parse_threshold
    from bootscope.usecases.reference import build_reference, reach, run_reference

    definition(metric)
    fraction = parse_threshold(threshold)
    if is_stored_run(inputs):
        from bootscope.store import Store  # sqlalchemy: only when run

        with Store.open(db, create=False) as store:
            variant, parts = run_variant_parts(store, inputs[0], DEFAULT_METRIC, every_component=True)
            document = run_reference(
                store, split_run(inputs[0])[0], variant, parts, threshold=fraction, alpha=alpha
            )
        source = f"run {document['source']['run']} variant {variant}"
    else:
        paths = [Path(item) for item in inputs]
        parts, metrics, machine = _boots_of_logs(paths)
        document = build_reference(
            source={"logs": [str(p) for p in paths], "boots": len(parts)},
            machine=machine,
            metrics=metrics,
            parts=parts,
            threshold=fraction,
            alpha=alpha,
        )
        source = "logs " + ", ".join(str(p) for p in paths)
    samples = document["metrics"].get(metric, [])
    found = reach(metric, samples, len(samples), fraction, alpha) if len(samples) >= 2 else None
    return SavedBaseline(document, source, len(parts), metric, found)


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
    """Return the verdict on new boots against the reference file ``against`` (or, for a stored run,
    the file of directory ``against`` whose fingerprint is the run's: ``check_pick.py``): ``inputs`` is one
    stored ``RUN[:VARIANT]`` (in ``db``; a name that is no file), or log files and directories.
    ``threshold`` (5% or 0.05) is the slowdown that counts as a regression, ``min_shift`` (1ms) the
    smallest shift a component must exceed; log files skipped go to ``warn``, one line each. The
    result's ``exit_code`` is the command's (0 pass, 1 regression, 125 cannot tell). Raises
    InputError for an unknown metric, a bad threshold or shift, an unreadable reference or log,
    ParseError for a log with no timestamp, StoreLookupError for a missing store or unknown run."""
    from bootscope.amounts import parse_amount
    from bootscope.usecases.bisect import parse_threshold
    from bootscope.usecases.check_rule import check_boots
    from bootscope.usecases.reference import load_reference

    definition(metric)
    fraction = parse_threshold(threshold)
    floor_s, relative = parse_amount(min_shift, "s", "--min-shift")
    if floor_s is None or relative is not None or floor_s < 0:
        raise InputError("--min-shift must be an amount such as 1ms, not a percentage")
    picked: str | None = None
    if against.is_dir() and not is_stored_run(inputs):
        raise InputError(f"--against {against} is a directory: its references are picked for a stored run")
    if is_stored_run(inputs):
        from bootscope.store import Store

        with Store.open(db, create=False) as store:
            if against.is_dir():
                from bootscope.usecases.check_pick import pick_reference

                choice = pick_reference(against, store, inputs[0])
                against, picked = choice.path, choice.note
            _, boots = run_variant_parts(store, inputs[0], metric)
    else:
        boots, warnings = parts_from_logs([Path(item) for item in inputs], metric, strict=True)
        for line in warnings:
            warn(line)
    reference = load_reference(against)
    result = check_boots(
        reference, boots, metric=metric, threshold=fraction, alpha=alpha, min_shift_s=floor_s
    )
    return result if picked is None else replace(result, notes=(picked, *result.notes))

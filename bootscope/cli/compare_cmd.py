"""`bootscope compare`: is b faster than a? Two sets of numbers, logs, or the variants of a stored run."""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path
from typing import Annotated

import typer

from bootscope.amounts import UNIT_FACTORS, parse_amount
from bootscope.cli.console import output_console
from bootscope.defaults import ALPHA, DEFAULT_DB
from bootscope.errors import BootscopeError, InputError
from bootscope.metrics import DEFAULT_METRIC
from bootscope.model import Comparison
from bootscope.report import compare_out, mail

FORMATS = ("table", "json", "markdown", "csv", "mail")


def parse_numbers(text: str, origin: str) -> list[float]:
    """Return the numbers of a comma/space separated list or a file's text (``#`` starts a comment).

    Raises InputError naming the first item that is not a finite number.
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


def _read_file(path: Path) -> list[float]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as error:
        raise InputError(f"{path}: cannot read ({error.strerror or error})") from None
    return parse_numbers(text, str(path))


def _definitions() -> dict[str, str]:
    from bootscope.metrics import DEFINITIONS

    return DEFINITIONS


def _check_metric(metric: str) -> None:
    known = _definitions()
    if metric not in known:
        raise InputError(f"unknown metric {metric!r}; known metrics: {', '.join(known)}")


def _values_from_logs(directory: Path, metric: str) -> list[float]:
    """Return ``metric`` (seconds) of every boot in every file of ``directory``, in name order."""
    from bootscope.analyze import analyze_boot
    from bootscope.parse import parse_log
    from bootscope.sources.files import read_text_lines

    if not directory.is_dir():
        raise InputError(f"{directory}: not a directory of logs")
    files = sorted(p for p in directory.iterdir() if p.is_file() and not p.name.startswith("."))
    values: list[float] = []
    missing = 0
    for path in files:
        try:
            boots = parse_log(read_text_lines(str(path))).boots
        except BootscopeError as error:
            print(f"bootscope: warning: {path}: skipped: {error}", file=sys.stderr)
            continue
        for lines in boots:
            value = getattr(analyze_boot(lines).metrics, metric)
            if value is None:
                missing += 1
            else:
                values.append(float(value))
    if missing:
        print(
            f"bootscope: warning: {directory}: {missing} boot(s) without {metric}, left out", file=sys.stderr
        )
    if not values:
        raise InputError(f"{directory}: no log there states {metric}")
    return values


def _values_from_run(
    run: str, db: str, metric: str, baseline: str | None
) -> tuple[str, dict[str, list[float]]]:
    from bootscope.store import Store

    store = Store.open(db)
    try:
        record = store.experiment(run)
        samples = store.samples(record.id, metric)
    finally:
        store.close()
    names = [v.name for v in record.variants] or list(samples)
    if len(names) < 2:
        raise InputError(f"run {record.id} has {len(names)} variant(s); compare needs two or more")
    base = baseline or names[0]
    if base not in names:
        raise InputError(f"variant {base!r} is not in run {record.id} (variants: {', '.join(names)})")
    empty = [name for name in names if not samples.get(name)]
    if len(empty) == len(names):
        raise InputError(f"no ok boot of run {record.id} reached {metric}")
    ordered = {base: samples.get(base, [])} | {n: samples.get(n, []) for n in names if n != base}
    return base, ordered


def compare(
    run: Annotated[str | None, typer.Argument(help="A stored run's id or 'latest'.")] = None,
    a: Annotated[str | None, typer.Option("--a", help="Side a as numbers: 8.7,8.4,...")] = None,
    b: Annotated[str | None, typer.Option("--b", help="Side b as numbers.")] = None,
    a_file: Annotated[
        Path | None, typer.Option("--a-file", help="Side a: one number per line, # comments.")
    ] = None,
    b_file: Annotated[Path | None, typer.Option("--b-file", help="Side b: one number per line.")] = None,
    a_logs: Annotated[Path | None, typer.Option("--a-logs", help="Side a: a directory of boot logs.")] = None,
    b_logs: Annotated[Path | None, typer.Option("--b-logs", help="Side b: a directory of boot logs.")] = None,
    baseline: Annotated[str | None, typer.Option(help="RUN's variant to compare the others with.")] = None,
    metric: Annotated[
        str | None, typer.Option(help=f"Metric to compare [default: {DEFAULT_METRIC}].")
    ] = None,
    db: Annotated[str, typer.Option(help="SQLite file or PostgreSQL URL of the store.")] = DEFAULT_DB,
    alpha: Annotated[float, typer.Option(help="Significance level.")] = ALPHA,
    alternative: Annotated[
        str, typer.Option(help="two-sided, less (b faster) or greater (b slower).")
    ] = "two-sided",
    method: Annotated[
        str, typer.Option(help="mw (Mann-Whitney + Hodges-Lehmann) or sign (seed 000).")
    ] = "mw",
    margin: Annotated[
        str | None, typer.Option(help="Sign test margin, e.g. 100ms [default: the data's resolution].")
    ] = None,
    detect: Annotated[str, typer.Option(help="Shift to size the sample for: 100ms, 0.1s or 1%.")] = "1%",
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap and the power simulation.")] = 1,
    fmt: Annotated[str, typer.Option("--format", help="table, json, markdown, csv or mail.")] = "table",
    unit: Annotated[str, typer.Option(help="s or ms: unit of --a/--b/files and of the output.")] = "s",
    fail_on: Annotated[str | None, typer.Option(help="Exit 1 when a verdict is 'slower'.")] = None,
) -> int:
    """Compare two sets of boot times: shift with interval, tests, verdict and boots needed."""
    from bootscope.stats.compare import SLOWER, Options, compare_many  # scipy: only when run

    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if unit not in UNIT_FACTORS:
        raise InputError(f"unknown unit {unit!r}; use s or ms")
    if fail_on not in (None, "slower"):
        raise InputError("--fail-on takes 'slower'")
    modes = {
        "RUN": run is not None,
        "--a/--b": a is not None or b is not None,
        "--a-file/--b-file": a_file is not None or b_file is not None,
        "--a-logs/--b-logs": a_logs is not None or b_logs is not None,
    }
    chosen = [name for name, given in modes.items() if given]
    if len(chosen) != 1:
        raise InputError("give exactly one input: RUN, --a/--b, --a-file/--b-file or --a-logs/--b-logs")
    factor = UNIT_FACTORS[unit]
    detect_abs, detect_rel = parse_amount(detect, unit, "--detect")
    margin_value = parse_amount(margin, unit, "--margin")[0] if margin is not None else None
    if margin is not None and margin_value is None:
        raise InputError("--margin must be an amount such as 100ms, not a percentage")
    options = Options(alpha, alternative, method, detect_abs, detect_rel, seed, margin_value)

    if run is not None:
        metric_name = metric or DEFAULT_METRIC
        _check_metric(metric_name)
        base, samples = _values_from_run(run, db, metric_name, baseline)
        scaled = {name: [v * factor for v in values] for name, values in samples.items()}
        baseline_values = scaled.pop(base)
        if len(baseline_values) < 2:
            raise InputError(f"baseline {base!r} has {len(baseline_values)} ok boot(s) with {metric_name}")
        comparisons = compare_many(baseline_values, scaled, metric_name, unit, options, base)
    else:
        if chosen[0] == "--a-logs/--b-logs":
            if a_logs is None or b_logs is None:
                raise InputError("give both --a-logs and --b-logs")
            metric_name = metric or DEFAULT_METRIC
            _check_metric(metric_name)
            side_a = [v * factor for v in _values_from_logs(a_logs, metric_name)]
            side_b = [v * factor for v in _values_from_logs(b_logs, metric_name)]
            names = (a_logs.name or "a", b_logs.name or "b")
        elif chosen[0] == "--a-file/--b-file":
            if a_file is None or b_file is None:
                raise InputError("give both --a-file and --b-file")
            side_a, side_b = _read_file(a_file), _read_file(b_file)
            metric_name, names = metric or "value", (a_file.stem or "a", b_file.stem or "b")
        else:
            if a is None or b is None:
                raise InputError("give both --a and --b")
            side_a, side_b = parse_numbers(a, "--a"), parse_numbers(b, "--b")
            metric_name, names = metric or "value", ("a", "b")
        comparisons = compare_many(side_a, {names[1]: side_b}, metric_name, unit, options, names[0])
    definition = _definitions().get(metric_name, "numbers given by the user (definition not stated)")
    _emit(comparisons, definition, fmt)
    slower = [c.b.name for c in comparisons if c.verdict == SLOWER]
    if fail_on == "slower" and slower:
        print(f"bootscope: slower: {', '.join(slower)} (--fail-on slower)", file=sys.stderr)
        return 1
    return 0


def _emit(comparisons: list[Comparison], definition: str, fmt: str) -> None:
    if fmt == "json":
        sys.stdout.write(compare_out.to_json(comparisons, definition) + "\n")
    elif fmt == "csv":
        sys.stdout.write(compare_out.to_csv(comparisons))
    elif fmt == "markdown":
        sys.stdout.write(compare_out.to_markdown(comparisons, definition))
    elif fmt == "mail":
        sys.stdout.write(mail.to_mail(comparisons, definition))
    else:
        output_console().print(compare_out.table(comparisons, definition))

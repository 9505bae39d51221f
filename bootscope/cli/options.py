"""Options shared by several commands, declared once so that one name means one thing everywhere.

``-n`` is always the number of measurements per variant (boots; for ``kexec``, reboots per chain, a
chain being one slot), ``--format`` always the OUTPUT format and ``--input-format`` the log format,
``--verbose`` the full view, ``--seed`` the seed of the measurement order (``compare`` seeds its
bootstrap with ``--bootstrap-seed``), ``--db`` the store, ``--timeout`` the seconds one slot may take,
``--mem`` one guest memory size in MiB.

``--alpha`` is always the significance level (intervals at 1 - alpha confidence), and
``--a-logs``/``--b-logs`` always name one side's logs: files, directories or quoted globs, repeatable.

Old spellings are kept for one release, hidden from ``--help``, each with a one-line note on stderr
(:func:`deprecated`): ``--json`` of every command with a ``--format`` (now ``--format json``: rewritten
once for all commands by :func:`json_as_format`), ``--format LOGFORMAT`` of analyze, report, trace and
plot (now ``--input-format``), ``compare --seed`` (now ``--bootstrap-seed``), ``latency analyze
--confidence`` (now ``--alpha``, 1 - confidence), ``bisect-run --baseline`` (now ``--reference``) and a
list given to ``kexec --mem`` (now ``--mem-sweep``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from bootscope import defaults
from bootscope.amounts import parse_fraction
from bootscope.errors import InputError
from bootscope.lab.plans.settings import GivenSettings
from bootscope.metrics import BOOT_STOP_METRIC
from bootscope.parse import FORMATS

AUTO = "auto"
TABLE_JSON = ("table", "json")

InputFormatOpt = Annotated[
    str, typer.Option("--input-format", help=f"Log format: {AUTO} (detect), {', '.join(FORMATS)}.")
]
Db = Annotated[str, typer.Option("--db", help="SQLite path or database URL (reading never creates one).")]
Seed = Annotated[int | None, typer.Option("--seed", help="Seed of the measurement order (default: random).")]
Jobs = Annotated[int | None, typer.Option("-j", "--jobs", help="Slots run at once (default: 1).")]
ExecutorOpt = Annotated[
    str | None,
    typer.Option(
        "--executor",
        help="Where slots run: local (default) or dask://HOST:PORT, a Dask scheduler whose workers"
        " (bootscope worker) boot one slot each at a time; this process still writes the store.",
    ),
]
Accel = Annotated[str | None, typer.Option("--accel", help="auto, kvm or tcg (default: auto).")]
QuietHost = Annotated[
    bool, typer.Option("--quiet-host", help="Wait for an idle host; re-run disturbed measurements.")
]
Retries = Annotated[
    int | None,
    typer.Option(
        "--retries",
        help="Boot a slot again, up to this many more times, when its boot failed (timeout, panic,"
        " QEMU error); the failed boots stay stored, marked superseded (default 0).",
    ),
]
Resume = Annotated[
    str | None, typer.Option("--resume", help="Finish stored experiment ID (or 'latest') after a crash.")
]
Timeout = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        help=f"Seconds one slot may take: a boot (default {defaults.BOOT_TIMEOUT_S:g}; an image's"
        f" {defaults.IMAGE_BOOT_TIMEOUT_S:g}), a kexec chain"
        f" (default {defaults.KEXEC_TIMEOUT_PER_KERNEL_S:g} per kernel).",
    ),
]
ALogs = Annotated[
    list[Path] | None,
    typer.Option("--a-logs", help="Side a: a log file, a directory of logs or a quoted glob (repeat)."),
]
BLogs = Annotated[
    list[Path] | None,
    typer.Option("--b-logs", help="Side b: a log file, a directory of logs or a quoted glob (repeat)."),
]
ConfidenceAlias = Annotated[
    float | None, typer.Option("--confidence", hidden=True, help="Deprecated: --alpha (1 - confidence).")
]
Until = Annotated[
    str | None,
    typer.Option(
        "--until",
        help="'precise': after -n rounds, add rounds until the 95% interval of each variant's shift"
        " against the first (one variant: of its median) is within +-precision of the first's median"
        f" ({BOOT_STOP_METRIC}); never stops on a p-value.",
    ),
]
Precision = Annotated[
    str | None, typer.Option("--precision", help="Target for --until, e.g. 1% (default 1%).")
]
MaxN = Annotated[
    int | None,
    typer.Option("--max-n", help="--until: at most this many measurements per variant (default 4 x -n)."),
]


def run_settings(
    *,
    samples: int | None,
    warmup: int | None,
    seed: int | None,
    timeout: float | None,
    accel: str | None,
    jobs: int | None,
    quiet_host: bool,
    until: str | None,
    precision: str | None,
    max_n: int | None,
    retries: int | None = None,
) -> GivenSettings:
    """Return the run settings given on the command line, typed and checked (None: not given, the
    plan file's or the default applies), for the run, sweep and history use cases.

    Raises InputError for --precision or --max-n without --until, a --precision that is not a
    percentage or fraction, or a value :func:`~bootscope.lab.plans.settings.check_settings` refuses."""
    if until is None and (precision is not None or max_n is not None):
        raise InputError("--precision and --max-n apply only with --until precise")
    return GivenSettings(
        samples_per_variant=samples,
        warmup_per_variant=warmup,
        seed=seed,
        timeout_s=timeout,
        accel=accel,
        jobs=jobs,
        quiet_host=quiet_host or None,
        until=until,
        precision=None if precision is None else parse_fraction(precision, "--precision"),
        max_n=max_n,
        retries=retries,
    )


def format_option(choices: Sequence[str], default: str | None = None) -> Any:
    """Return the ``--format`` option (the OUTPUT format) offering ``choices``, for ``Annotated``.

    Every command declares its ``--format`` through this, so the name, the help's wording and the
    default's place in it are the same everywhere; :func:`check_format` validates the value."""
    shown = f" (default {default})" if default else ""
    return typer.Option("--format", help=f"Output format: {', '.join(choices)}{shown}.")


def check_format(value: str, choices: Sequence[str]) -> str:
    """Return ``value`` if it is one of ``choices``; raises InputError naming the choices."""
    if value not in choices:
        raise InputError(f"--format {value}: choose {', '.join(choices[:-1])} or {choices[-1]}")
    return value


def deprecated(old: str, new: str) -> None:
    """Print the one-line note that the old spelling ``old`` is now ``new`` (stderr, never stdout)."""
    print(f"bootscope: note: {old} is now {new}; the old spelling goes in the next release", file=sys.stderr)


VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Show everything, absent values included.")]


def resolve_formats(
    format_value: str | None, input_format: str, output_choices: Sequence[str], default_output: str
) -> tuple[str, str]:
    """Return ``(output format, input format)`` from ``--format`` and ``--input-format``.

    A log format name (or ``auto``) given to ``--format`` is the deprecated spelling of
    ``--input-format``: it is taken as such and a one-line note goes to stderr. Raises InputError for
    a ``--format`` that is neither, or for two different input formats."""
    if format_value is None or format_value in output_choices:
        return (format_value or default_output, input_format)
    if format_value == AUTO or format_value in FORMATS:
        if input_format != AUTO and input_format != format_value:
            raise InputError(f"--format {format_value} and --input-format {input_format} disagree")
        print(
            f"bootscope: note: --format {format_value} names the log format: use --input-format"
            f" {format_value} (--format is the output format: {', '.join(output_choices)});"
            " the old spelling goes in the next release",
            file=sys.stderr,
        )
        return (default_output, format_value)
    raise InputError(
        f"--format {format_value}: choose an output format ({', '.join(output_choices)});"
        f" the log format is --input-format ({AUTO}, {', '.join(FORMATS)})"
    )


def alpha_level(alpha: float | None, old_confidence: float | None) -> float:
    """Return the significance level (a fraction) from ``--alpha`` (None: not given, the default
    applies) and the hidden ``--confidence``, its old spelling as 1 - alpha (a note when used).

    Raises InputError for a level outside (0, 1) or for the two given with different meanings."""
    level = defaults.ALPHA if alpha is None else alpha
    if old_confidence is not None:
        converted = 1 - old_confidence
        deprecated(f"--confidence {old_confidence:g}", f"--alpha {converted:g}")
        if alpha is not None and abs(alpha - converted) > 1e-9:
            raise InputError(f"--confidence {old_confidence:g} and --alpha {alpha:g} disagree")
        level = converted
    if not 0 < level < 1:
        raise InputError(f"--alpha must lie between 0 and 1, not {level:g}")
    return level


def json_as_format(app: object, args: Sequence[str]) -> list[str]:
    """Return ``args`` (the command line without the program name) with each ``--json`` that the
    invoked command would read as an option replaced by ``--format json``, and a one-line note.

    ``--json`` is the old spelling of ``--format json`` in every command that has a ``--format``;
    rewriting it here, once, keeps them all alike. Arguments after ``--`` and values of options that
    take one are left alone; a command without ``--format`` gets ``args`` unchanged (its parser then
    refuses ``--json``). Raises InputError for ``--json`` beside a ``--format`` other than json."""
    command, start = _invoked_command(app, args)
    if command is None:
        return list(args)
    takes_value: set[str] = set()
    for param in getattr(command, "params", ()):
        if param.param_type_name == "option" and not param.is_flag and not param.count:
            takes_value.update(param.opts)
    if "--format" not in takes_value:
        return list(args)
    rewritten, formats, found = list(args[:start]), list[str](), False
    words = iter(args[start:])
    for word in words:
        if word == "--":
            rewritten += [word, *words]
            break
        if word == "--json":
            found = True
            rewritten += ["--format", "json"]
            continue
        rewritten.append(word)
        name, has_value, value = word.partition("=")
        if name in takes_value and not has_value:
            value = next(words, "")
            rewritten.append(value)
        if name == "--format":
            formats.append(value)
    if not found:
        return list(args)
    deprecated("--json", "--format json")
    other = next((value for value in formats if value != "json"), None)
    if other is not None:
        raise InputError(f"--json and --format {other} disagree")
    return rewritten


def _invoked_command(app: object, args: Sequence[str]) -> tuple[object | None, int]:
    """Return the (sub)command of the CLI library's command ``app`` that ``args`` runs and the index
    of its first argument; (None, 0) when no command is named or a name is unknown. (Typer bundles
    its own copy of click, so groups are told by their ``commands`` table, not by class.)"""
    command: object = app
    position = 0
    while isinstance(commands := getattr(command, "commands", None), dict):
        index = next((i for i in range(position, len(args)) if not args[i].startswith("-")), None)
        if index is None or args[index] not in commands:
            return None, 0
        command, position = commands[args[index]], index + 1
    return command, position

"""The command line: one thin module per user task; this file registers them, answers ``--version``
and turns the old ``--json`` into ``--format json`` for every command (``options.json_as_format``).

Every ``BootscopeError`` becomes one line on stderr and its exit code; Ctrl-C exits 130; any other
exception is reported in one line (set ``BOOTSCOPE_DEBUG=1`` for the traceback).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import sys
from dataclasses import dataclass
from typing import Annotated

# numpy's OpenBLAS starts a thread per core when numpy is imported (about 60 ms of CPU on every
# start-up); bootscope's linear algebra is small vectors and never needs them. A user's own setting
# wins. Set before anything imports numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import typer

from bootscope.errors import BootscopeError


@dataclass(frozen=True, slots=True)
class Command:
    """One verb: the module under ``bootscope.cli`` and the attribute that implements it (a function,
    or a ``typer.Typer`` for a verb with subcommands), and the line ``bootscope --help`` shows."""

    module: str
    attribute: str
    short_help: str
    group: bool = False


# Every verb, in the order `bootscope --help` lists them. Only the verb being run is imported (its
# module pulls in numpy, rich tables, the store...); the others are listed from this table, so start-up
# stays short. tests/cli/test_command_table.py checks each line against the command's own help.
COMMANDS: dict[str, Command] = {
    "analyze": Command("analyze_cmd", "analyze", "Show where boot time went in kernel logs."),
    "kernels": Command("kernels_cmd", "kernels", "List the kernels in bootscope's cache."),
    "kexec": Command("kexec_cmd", "kexec", "Measure kexec reboot downtime, hop by hop."),
    "compare": Command("compare_cmd", "compare", "Compare two sets of boot times: shift, tests, verdict."),
    "diff": Command("diff_cmd", "diff", "What got slower: every phase, initcall, gap, CPU and unit."),
    "baseline": Command(
        "check_cmd", "baseline_app", "Save boots or logs as reference values for check.", group=True
    ),
    "check": Command("check_cmd", "check", "Check new boots against reference values (for CI)."),
    "report": Command("report_cmd", "report", "Write one self-contained HTML report."),
    "sweep": Command("sweep_cmd", "sweep", "Boot a grid of options, machines and kernels."),
    "tune": Command("tune_cmd", "tune", "Find what makes this boot faster, try it, prove each saving."),
    "history": Command("history_cmd", "history", "A metric across kernel versions, and its change points."),
    "watch": Command("watch_cmd", "watch", "Judge every stored series; open or update its alerts."),
    "alerts": Command("watch_cmd", "alerts", "List the alerts `bootscope watch` found."),
    "alert": Command("watch_cmd", "alert", "Show one alert, or triage it."),
    "bisect-run": Command("bisect_cmd", "bisect_run", "For `git bisect run`: build, boot, compare."),
    "run": Command("run_cmd", "run", "Boot a kernel (and variants) many times in QEMU; store every boot."),
    "runs": Command("runs_cmd", "runs", "List the experiments stored in a database."),
    "export": Command("runs_cmd", "export", "Write one stored experiment out, with every boot."),
    "trace": Command("report_cmd", "trace", "Write one boot as a Perfetto (Chrome trace event) file."),
    "plot": Command("report_cmd", "plot", "Write a 16:9 picture of a boot or a metric."),
    "image": Command("image_cmd", "app", "Build and list bootable Debian system images.", group=True),
    "latency": Command("latency_cmd", "app", "Real-time latency: cyclictest, oslat, rtla.", group=True),
    "target": Command("target_cmd", "app", "Check that a machine over SSH can be measured.", group=True),
    "serve": Command("serve_cmd", "serve", "Serve the store as a web dashboard (series, alerts, runs)."),
    "worker": Command("worker_cmd", "worker", "Serve boot slots to a Dask scheduler (run --executor)."),
    "fleet": Command(
        "fleet_cmd", "app", "Import the boot logs of many hosts; query and compare them.", group=True
    ),
}


def _invoked(argv: list[str]) -> str | None:
    """Return the verb that ``argv`` (without the program name) runs: its first word that is not an
    option; None when there is none (``bootscope``, ``bootscope --help``)."""
    return next((word for word in argv if not word.startswith("-")), None)


def build_app(verb: str | None) -> typer.Typer:
    """Return the CLI with ``verb`` (a name of COMMANDS, or None) registered for real and every other
    verb as a stand-in that only carries its line of ``--help``. Raises ImportError only for a
    broken installation."""
    app = typer.Typer(
        name="bootscope",
        help="Measure where Linux boot time goes, and whether a change really made it faster.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        # Plain help: typer's rich help pulls in markdown-it (about 100 ms of every start-up) and reads
        # help text as markup.
        rich_markup_mode=None,
    )
    app.callback()(_top)
    for name, command in COMMANDS.items():
        if name != verb:
            app.command(name, short_help=command.short_help, add_help_option=False)(_stand_in)
            continue
        target = getattr(importlib.import_module(f"bootscope.cli.{command.module}"), command.attribute)
        if command.group:
            app.add_typer(target, name=name, short_help=command.short_help)
        else:
            app.command(name, short_help=command.short_help)(target)
    return app


def _stand_in() -> None:
    """Never run: a verb other than the one invoked is registered only to be listed."""


def _show_version(given: bool) -> None:
    """Print ``bootscope VERSION`` (the installed package's, from its metadata) and stop with exit 0."""
    if not given:
        return
    try:
        version = importlib.metadata.version("bootscope")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree that was never installed
        from bootscope import __version__ as version
    print(f"bootscope {version}")
    raise typer.Exit(0)


def _top(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", is_eager=True, callback=_show_version, help="Show the version."),
    ] = False,
) -> None:
    """Options of ``bootscope`` itself, before the verb."""


def main() -> None:
    """Run the CLI; exits with the code of the error that stopped it (0 on success)."""
    args = sys.argv[1:]
    verb = _invoked(args)
    app = build_app(verb if verb in COMMANDS else None)
    try:
        if verb in COMMANDS and "--json" in args:  # the old spelling of --format json, in every command
            from bootscope.cli.options import json_as_format

            args = json_as_format(typer.main.get_command(app), args)
        result = app(args=args, prog_name="bootscope", standalone_mode=False)
    except BootscopeError as error:
        print(f"bootscope: error: {error}", file=sys.stderr)
        sys.exit(error.exit_code)
    except (KeyboardInterrupt, typer.Abort):
        print("bootscope: interrupted", file=sys.stderr)
        sys.exit(130)
    except SystemExit:
        raise
    except Exception as error:
        if os.environ.get("BOOTSCOPE_DEBUG"):
            raise
        show = getattr(error, "show", None)
        if callable(show):  # a usage error from the CLI library: it prints its own message
            show()
            sys.exit(int(getattr(error, "exit_code", 2)))
        # The last line of defence: one line, never a traceback.
        print(f"bootscope: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        sys.exit(70)
    if isinstance(result, int) and result != 0:
        sys.exit(result)

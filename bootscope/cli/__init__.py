"""The command line: one thin module per user task; this file only registers them.

Every ``BootscopeError`` becomes one line on stderr and its exit code; Ctrl-C exits 130; any other
exception is reported in one line (set ``BOOTSCOPE_DEBUG=1`` for the traceback).
"""

from __future__ import annotations

import os
import sys

import typer

from bootscope.errors import BootscopeError

app = typer.Typer(
    name="bootscope",
    help="Measure where Linux boot time goes, and whether a change really made it faster.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register() -> None:
    # Imported here so that `bootscope --help` names every command and each module stays thin.
    from bootscope.cli import analyze_cmd

    app.command("analyze")(analyze_cmd.analyze)

    from bootscope.cli import kernels_cmd

    app.command("kernels")(kernels_cmd.kernels)

    from bootscope.cli import kexec_cmd

    app.command("kexec")(kexec_cmd.kexec)

    from bootscope.cli import compare_cmd

    app.command("compare")(compare_cmd.compare)

    from bootscope.cli import report_cmd

    app.command("report")(report_cmd.report)

    from bootscope.cli import sweep_cmd

    app.command("sweep")(sweep_cmd.sweep)
    app.command("history")(sweep_cmd.history)
    app.command("bisect-run")(sweep_cmd.bisect_run)

    from bootscope.cli import image_cmd

    app.add_typer(image_cmd.app)

    from bootscope.cli import target_cmd

    app.add_typer(target_cmd.app)

    from bootscope.cli import latency_cmd

    app.add_typer(latency_cmd.app)

    from bootscope.cli import run_cmd, runs_cmd

    app.command("run")(run_cmd.run)
    app.command("runs")(runs_cmd.runs)
    app.command("export")(runs_cmd.export)
    app.command("trace")(report_cmd.trace)
    app.command("plot")(report_cmd.plot)


def main() -> None:
    """Run the CLI; exits with the code of the error that stopped it (0 on success)."""
    _register()
    try:
        result = app(standalone_mode=False)
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

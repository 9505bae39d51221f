"""``bootscope target check ssh://USER@HOST[:PORT]``: can this machine be measured, what to change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from bootscope.cli import options
from bootscope.report.console import output_console

app = typer.Typer(
    name="target",
    help="Check a machine reached over SSH before measuring it.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


@app.command("check")
def check(
    target: Annotated[str, typer.Argument(help="ssh://USER@HOST[:PORT] or libvirt:NAME[?connect=URI]")],
    identity: Annotated[Path | None, typer.Option("--identity", help="The private key.")] = None,
    known_hosts: Annotated[Path | None, typer.Option("--known-hosts", help="known_hosts file.")] = None,
    fmt: Annotated[str, options.format_option(options.TABLE_JSON, "table")] = "table",
) -> None:
    """Say whether the machine can be measured: reachable, kexec loaded and allowed, journal persistent,
    printk.time, clock source, initcall_debug, free disk; what to change and why. Exit 0 when nothing
    is bad, 1 when a check is bad, 3 when SSH refuses or the machine does not answer."""
    from bootscope.report.target_out import target_document, target_table
    from bootscope.usecases.target import check_target_text

    checked = check_target_text(target, identity, known_hosts)
    out = output_console()
    if options.check_format(fmt, options.TABLE_JSON) == "json":
        out.print_json(json.dumps(target_document(checked)))
    else:
        out.print(target_table(checked))
    if checked.bad:
        raise typer.Exit(1)

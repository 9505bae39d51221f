"""``bootscope target check ssh://USER@HOST[:PORT]``: can this machine be measured, what to change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

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
    target: Annotated[str, typer.Argument(help="ssh://USER@HOST[:PORT]")],
    identity: Annotated[Path | None, typer.Option("--identity", help="The private key.")] = None,
    known_hosts: Annotated[Path | None, typer.Option("--known-hosts", help="known_hosts file.")] = None,
    fmt: Annotated[str, options.format_option(options.TABLE_JSON, "table")] = "table",
) -> None:
    """Say whether the machine can be measured: reachable, kexec loaded and allowed, journal persistent,
    printk.time, clock source, initcall_debug, free disk; what to change and why. Exit 0 when nothing
    is bad, 1 when a check is bad, 3 when SSH refuses or the machine does not answer."""
    from bootscope.lab.targets.ssh_check import BAD, check_target
    from bootscope.lab.targets.ssh_client import parse_ssh_url
    from bootscope.lab.workloads.ssh import read_local_machine_id

    address = parse_ssh_url(target, identity, known_hosts)
    checks = check_target(address, read_local_machine_id())
    out = output_console()
    if options.output_format(fmt, False) == "json":
        document = {
            "target": address.url,
            "checks": [
                {"name": c.name, "status": c.status, "found": c.found, "advice": c.advice} for c in checks
            ],
        }
        out.print_json(json.dumps(document))
    else:
        table = Table(title=f"target {escape(address.url)}", title_justify="left")
        for column in ("check", "status", "found", "what to change and why"):
            table.add_column(column, overflow="fold")
        for c in checks:
            table.add_row(escape(c.name), c.status, escape(c.found), escape(c.advice))
        out.print(table)
    bad = [c.name for c in checks if c.status == BAD]
    if bad:
        raise typer.Exit(1)

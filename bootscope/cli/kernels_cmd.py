"""`bootscope kernels`: list cached kernels and, with --offered, what the Debian package index has."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from bootscope.lab.qemu.kernels import list_kernels, resolve_kernel
from bootscope.report.console import output_console
from bootscope.report.kernels_out import cached_table, offered_table


def kernels(
    offered: Annotated[
        bool, typer.Option("--offered", help="Also list the cloud, amd64 and rt kernels that apt offers.")
    ] = False,
    fetch: Annotated[
        str | None,
        typer.Option(
            "--fetch", metavar="SPEC", help="Fetch a kernel first: debian:cloud|amd64|rt or a package."
        ),
    ] = None,
) -> None:
    """List the kernels in bootscope's cache (and what the package index offers)."""
    console = output_console()
    if fetch is not None:
        image = resolve_kernel(fetch)
        console.print(
            f"fetched {escape(fetch)}: {escape(str(image.image))} (release {escape(str(image.release))})"
        )
    listing = list_kernels(offered=offered)
    if listing.cached:
        console.print(cached_table(listing))
    else:
        console.print("no cached kernels (fetch one with: bootscope kernels --fetch debian:cloud)")
    if offered:
        console.print(offered_table(listing))

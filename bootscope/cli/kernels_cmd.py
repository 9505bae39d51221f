"""`bootscope kernels`: list cached kernels and, with --offered, what the Debian package index has."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from bootscope.lab.qemu.kernels import list_kernels, resolve_kernel
from bootscope.report.console import output_console


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
    table = Table(title=f"cached kernels in {escape(str(listing.cache_dir))}")
    for column in ("package", "version", "release", "size", "image"):
        table.add_column(column, justify="right" if column == "size" else "left", overflow="fold")
    for kernel in listing.cached:
        table.add_row(
            escape(kernel.package),
            escape(kernel.version or "?"),
            escape(kernel.release or "?"),
            f"{kernel.size_bytes / 2**20:.1f} MiB",
            escape(str(kernel.image)),
        )
    if listing.cached:
        console.print(table)
    else:
        console.print("no cached kernels (fetch one with: bootscope kernels --fetch debian:cloud)")
    if offered:
        offers = Table(title="offered by the package index (use as debian:<flavour> or debian:<package>)")
        for column in ("flavour", "package", "version"):
            offers.add_column(column)
        for offer in listing.offered:
            offers.add_row(escape(offer.flavour), escape(offer.package), escape(offer.version or "?"))
        console.print(offers)

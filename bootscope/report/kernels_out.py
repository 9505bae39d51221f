"""How bootscope's kernel cache is listed (``bootscope kernels``): the cached kernels and, with
``--offered``, what the Debian package index offers."""

from __future__ import annotations

import sys
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from bootscope.lab.qemu.kernels import KernelListing
from bootscope.report.rich_fit import drop_to_fit
from bootscope.report.screen import stdout_width_cells


def cached_table(listing: KernelListing) -> Table:
    """Return the table of the cached kernels (package, version, release, size in MiB, image path
    under the cache folder the title names), fitted to stdout's width (the image path, then the
    version, left out when the rest cannot fit)."""
    table = Table(title=f"cached kernels in {escape(str(listing.cache_dir))}", title_justify="left")
    for column in ("package", "version", "release", "size", "image"):
        size = column == "size"
        table.add_column(column, justify="right" if size else "left", no_wrap=size, overflow="fold")
    for kernel in listing.cached:
        table.add_row(
            escape(kernel.package),
            escape(kernel.version or "?"),
            escape(kernel.release or "?"),
            f"{kernel.size_bytes / 2**20:.1f} MiB",
            escape(_under(kernel.image, listing.cache_dir)),
        )
    drop_to_fit(table, stdout_width_cells(sys.stdout), ("image", "version"))
    return table


def _under(path: Path, folder: Path) -> str:
    """``path`` relative to ``folder`` when it lies under it (the table's title names the folder)."""
    return str(path.relative_to(folder)) if path.is_relative_to(folder) else str(path)


def offered_table(listing: KernelListing) -> Table:
    """Return the table of the kernels the package index offers (flavour, package, version)."""
    offers = Table(title="offered by the package index (use as debian:<flavour> or debian:<package>)")
    for column in ("flavour", "package", "version"):
        offers.add_column(column)
    for offer in listing.offered:
        offers.add_row(escape(offer.flavour), escape(offer.package), escape(offer.version or "?"))
    return offers

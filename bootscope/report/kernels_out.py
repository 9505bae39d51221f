"""How bootscope's kernel cache is listed (``bootscope kernels``): the cached kernels and, with
``--offered``, what the Debian package index offers."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from bootscope.lab.qemu.kernels import KernelListing


def cached_table(listing: KernelListing) -> Table:
    """Return the table of the cached kernels (package, version, release, size in MiB, image path)."""
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
    return table


def offered_table(listing: KernelListing) -> Table:
    """Return the table of the kernels the package index offers (flavour, package, version)."""
    offers = Table(title="offered by the package index (use as debian:<flavour> or debian:<package>)")
    for column in ("flavour", "package", "version"):
        offers.add_column(column)
    for offer in listing.offered:
        offers.add_row(escape(offer.flavour), escape(offer.package), escape(offer.version or "?"))
    return offers

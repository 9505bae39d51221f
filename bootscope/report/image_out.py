"""How the cached system images are listed (``bootscope image list``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from bootscope.lab.qemu.image import Image


def images_table(images: Sequence[Image], where: Path) -> Table:
    """Return the table of ``images`` (name, key, suite, kernel, packages, size in MiB, build time in
    seconds, disk) found in the cache folder ``where``."""
    table = Table(title=f"images in {escape(str(where))}", title_justify="left")
    for column in ("name", "key", "suite", "kernel", "packages", "size", "build", "disk"):
        table.add_column(column, overflow="fold")
    for image in images:
        table.add_row(
            escape(image.name or "-"),
            image.key,
            escape(image.recipe.suite),
            escape(image.release),
            escape(",".join(image.recipe.packages) or "-"),
            f"{image.recipe.size_bytes >> 20} MiB",
            f"{image.build_s:.0f} s",
            escape(str(image.disk)),
        )
    return table

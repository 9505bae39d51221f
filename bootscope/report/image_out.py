"""How the cached system images are listed (``bootscope image list``)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from bootscope.lab.qemu.image import Image
from bootscope.report.rich_fit import drop_to_fit
from bootscope.report.screen import stdout_width_cells


def images_table(images: Sequence[Image], where: Path) -> Table:
    """Return the table of ``images`` (name, key, suite, kernel, packages, size in MiB, build time in
    seconds, disk: under ``where`` when it lies there) found in the cache folder ``where``, fitted to
    stdout's width (key, disk, build time and suite left out, in this order, when the rest cannot
    fit)."""
    table = Table(title=f"images in {escape(str(where))}", title_justify="left")
    for column in ("name", "key", "suite", "kernel", "packages", "size", "build", "disk"):
        number = column in ("size", "build")
        table.add_column(column, justify="right" if number else "left", no_wrap=number, overflow="fold")
    for image in images:
        table.add_row(
            escape(image.name or "-"),
            image.key,
            escape(image.recipe.suite),
            escape(image.release),
            escape(", ".join(image.recipe.packages) or "-"),
            f"{image.recipe.size_bytes >> 20} MiB",
            f"{image.build_s:.0f} s",
            escape(
                str(image.disk.relative_to(where)) if image.disk.is_relative_to(where) else str(image.disk)
            ),
        )
    drop_to_fit(table, stdout_width_cells(sys.stdout), ("key", "disk", "build", "suite"))
    return table

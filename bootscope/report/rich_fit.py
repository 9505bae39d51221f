"""Rich tables narrowed to the terminal: the low-value columns left out when the rest cannot fit.

A rich table always fits its console: it wraps cells at spaces, and when that is not enough it cuts
every column, numbers included. Before that happens, :func:`drop_to_fit` leaves out the columns a
renderer names as least worth their room, in its order, and says which in the table's caption.
Number columns are added with ``no_wrap=True``, so that rich wraps the text columns first.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

from bootscope.report.text_table import left_out_line

_UNBOUNDED_CELLS = 1 << 20


def narrowest_cells(table: Table) -> int:
    """Return the fewest terminal cells ``table`` takes without cutting a word of a cell (every
    cell wrapped at its spaces), borders included."""
    # measured on an unbounded console: a measurement is clamped to the width it is given
    console = Console(width=_UNBOUNDED_CELLS, highlight=False, emoji=False)
    return Measurement.get(console, console.options, table).minimum


def drop_to_fit(table: Table, width_cells: int, droppable: Sequence[str]) -> tuple[str, ...]:
    """Remove from ``table`` the fewest of the columns headed ``droppable`` (in that order) that it
    needs to fit ``width_cells`` without cutting a word (:func:`narrowest_cells`), name them in the
    table's caption, and return their headers. A header not in the table is skipped."""
    dropped: list[str] = []
    for header in droppable:
        if narrowest_cells(table) <= width_cells:
            break
        index = next((i for i, column in enumerate(table.columns) if column.header == header), None)
        if index is not None:
            del table.columns[index]
            dropped.append(header)
    if dropped:
        table.caption = left_out_line(dropped, width_cells)
        table.caption_justify = "left"
    return tuple(dropped)

"""A plain-text screen on stdout for the glance view: lines wrapped to the terminal's width, rules,
tables (:mod:`bootscope.report.text_table`), bold only on a terminal.

The width (:func:`stdout_width_cells`, shared with the rich consoles of
:mod:`bootscope.report.console`) is ``COLUMNS`` when set, else the terminal's, else 80 when stdout is
a pipe or a file. Styles are ANSI SGR codes, written only when stdout is a terminal, ``TERM`` is not ``dumb``
and ``NO_COLOR`` is unset.
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

from bootscope.report.text_table import TextTable, cell_width, cut, lay_out, wrap

PIPED_WIDTH = 80
MIN_WIDTH = 20
# The SGR codes of the few styles the glance view uses.
STYLES = {"": "", "bold": "1", "alarm": "1;31"}


def stdout_width_cells(stream: TextIO) -> int:
    """Return how many terminal cells wide output to ``stream`` is: ``COLUMNS`` when it holds a
    positive number, else the width of the terminal ``stream`` is, else PIPED_WIDTH (a pipe, a
    file, a test's capture); never less than MIN_WIDTH."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return max(MIN_WIDTH, int(columns))
    try:
        width = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):  # no descriptor, or not a terminal
        width = 0
    return max(MIN_WIDTH, width or PIPED_WIDTH)  # a pseudo-terminal may say 0


class Screen:
    """Where the glance view is written: ``stream``, ``width_cells`` wide, with ANSI styles or not."""

    def __init__(self, stream: TextIO, width_cells: int, *, ansi: bool) -> None:
        self.stream = stream
        self.width_cells = max(MIN_WIDTH, width_cells)
        self.ansi = ansi

    @classmethod
    def stdout(cls) -> Screen:
        """Return a Screen on sys.stdout sized as described in the module docstring."""
        stream = sys.stdout
        width = stdout_width_cells(stream)
        terminal = stream.isatty()
        ansi = terminal and os.environ.get("TERM") != "dumb" and "NO_COLOR" not in os.environ
        return cls(stream, width, ansi=ansi)

    def _styled(self, text: str, style: str) -> str:
        code = STYLES[style]
        return f"\x1b[{code}m{text}\x1b[0m" if code and self.ansi and text else text

    def line(self, text: str, *, style: str = "") -> None:
        """Write ``text`` (plain, never markup), wrapped to the width; ``style`` a key of STYLES."""
        for piece in wrap(text, self.width_cells):
            self.stream.write(self._styled(piece.rstrip(" "), style) + "\n")

    def rule(self, title: str) -> None:
        """Write a horizontal rule across the width with ``title`` (cut to fit) in its middle."""
        shown = cut(title, self.width_cells - 6)
        fill = self.width_cells - cell_width(shown) - 2
        left = fill // 2
        self.stream.write(f"{'─' * left} {self._styled(shown, 'bold')} {'─' * (fill - left)}\n")

    def table(self, table: TextTable) -> None:
        """Write ``table`` laid out to the width (its header and bold cells bold on a terminal)."""
        bold = ("\x1b[1m", "\x1b[0m") if self.ansi else ("", "")
        for text in lay_out(table, self.width_cells, bold):
            self.stream.write(text + "\n")

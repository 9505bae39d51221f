"""Tables and paragraphs laid out as lines of plain text, by terminal cells.

The glance view (``bootscope analyze LOG``) is drawn with this instead of rich: rich's import and
table layout were about a fifth of a small log's 0.25 s start-up (bench/RESULTS.md, start-up).
Cells are plain strings: nothing in them is read as markup, so log text needs no escaping (only
``text_cells.clean`` for control characters). The box is the one rich draws by default (heavy
head), so the views of ``--verbose`` and of the glance look alike.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

ELLIPSIS = "…"
# A column is not cut narrower than this (or its natural width, if smaller) to fit the screen.
MIN_CUT_WIDTH = 4
_TOP = ("┏", "━", "┳", "┓")
_HEAD = ("┃", "┃", "┃")
_UNDER_HEAD = ("┡", "━", "╇", "┩")
_BODY = ("│", "│", "│")
_BOTTOM = ("└", "─", "┴", "┘")


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its header, right- or left-justified, and what happens to a cell wider than the
    column gets: folded onto more lines (``fold``) or cut with an ellipsis; ``bold`` cells when the
    screen shows styles."""

    header: str = ""
    right: bool = False
    fold: bool = False
    bold: bool = False


@dataclass(slots=True)
class TextTable:
    """Rows of plain-string cells under ``columns``; ``boxed`` draws borders and a header row, else
    the columns are ``gap`` spaces apart (a grid); ``title`` is a line above the table;
    ``bold_rows`` holds the indices of rows shown bold in every column."""

    columns: tuple[Column, ...]
    title: str = ""
    boxed: bool = True
    gap: int = 2
    rows: list[tuple[str, ...]] = field(default_factory=list)
    bold_rows: set[int] = field(default_factory=set)

    def add_row(self, *cells: str, bold: bool = False) -> None:
        """Append one row (``bold``: in every column); raises ValueError when the cell count is not
        the column count."""
        if len(cells) != len(self.columns):
            raise ValueError(f"a row of {len(cells)} cells in a table of {len(self.columns)} columns")
        if bold:
            self.bold_rows.add(len(self.rows))
        self.rows.append(cells)


def cell_width(text: str) -> int:
    """Return how many terminal cells ``text`` takes: 2 for a wide (East Asian) character, 0 for a
    combining mark, 1 for any other."""
    if text.isascii():
        return len(text)
    return sum(_char_width(char) for char in text)


def _char_width(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def cut(text: str, width: int) -> str:
    """Return ``text`` cut to at most ``width`` cells, an ellipsis marking the cut."""
    if cell_width(text) <= width:
        return text
    if width <= 0:
        return ""
    kept: list[str] = []
    used = 0
    for char in text:
        size = _char_width(char)
        if used + size > width - 1:
            break
        kept.append(char)
        used += size
    return "".join(kept) + ELLIPSIS


def wrap(text: str, width: int) -> list[str]:
    """Return ``text`` as lines of at most ``width`` cells, broken at spaces where it can be and
    inside a word longer than a line; always at least one line. Runs of spaces inside a line are
    kept; the spaces at a break are dropped."""
    if cell_width(text) <= width or width <= 0:
        return [text]
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        if cell_width(candidate) <= width:
            line = candidate
            continue
        if line:
            lines.append(line)
        line = word
        while cell_width(line) > width:  # a word longer than a line: fold it
            head = _head_cells(line, width)
            lines.append(head)
            line = line[len(head) :]
    lines.append(line)
    return lines


def paragraph(text: str, width: int, indent: str = "  ") -> list[str]:
    """Return ``text`` wrapped to ``width`` cells (:func:`wrap`), the lines after the first
    indented by ``indent``, so that a long note reads as one item."""
    first, *rest = wrap(text, width)
    if not rest:
        return [first]
    return [first, *(indent + line for line in wrap(" ".join(rest), width - cell_width(indent)))]


def _head_cells(text: str, width: int) -> str:
    used = 0
    for position, char in enumerate(text):
        used += _char_width(char)
        if used > width:
            return text[: max(1, position)]
    return text


def lay_out(table: TextTable, width: int, bold: tuple[str, str] = ("", "")) -> list[str]:
    """Return ``table`` as lines of at most ``width`` cells where it can fit (columns are cut or
    folded, the widest first, down to ``MIN_CUT_WIDTH``); ``bold`` is the pair of strings put around
    a bold cell and the header (empty: plain text). The title line is wrapped to ``width``."""
    widths = _column_widths(table, width)
    lines = wrap(table.title, width) if table.title else []
    all_bold = tuple(Column(c.header, c.right, c.fold, True) for c in table.columns)
    styles = [all_bold if index in table.bold_rows else table.columns for index in range(len(table.rows))]
    if table.boxed:
        lines.append(_rule(_TOP, widths))
        headers = tuple(column.header for column in table.columns)
        lines.extend(_row_lines(headers, all_bold, widths, _HEAD, bold))
        lines.append(_rule(_UNDER_HEAD, widths))
        for row, columns in zip(table.rows, styles, strict=True):
            lines.extend(_row_lines(row, columns, widths, _BODY, bold))
        lines.append(_rule(_BOTTOM, widths))
    else:
        for row, columns in zip(table.rows, styles, strict=True):
            lines.extend(_grid_lines(row, columns, widths, table.gap, bold))
    return lines


def without(table: TextTable, headers: Sequence[str]) -> TextTable:
    """Return a copy of ``table`` without the columns headed ``headers`` (bold rows kept)."""
    kept = [index for index, column in enumerate(table.columns) if column.header not in headers]
    return replace(
        table,
        columns=tuple(table.columns[index] for index in kept),
        rows=[tuple(row[index] for index in kept) for row in table.rows],
        bold_rows=set(table.bold_rows),
    )


def numbers_fit(table: TextTable, width: int) -> bool:
    """Return whether ``table`` laid out to ``width`` cells keeps every number (right-justified)
    column whole: the text columns alone, cut down to MIN_CUT_WIDTH, make the room."""
    natural = _column_widths(table, 1 << 30)
    widths = _column_widths(table, width)
    return all(w == n for w, n, column in zip(widths, natural, table.columns, strict=True) if column.right)


def drop_to_fit(table: TextTable, width: int, droppable: Sequence[str]) -> tuple[TextTable, tuple[str, ...]]:
    """Return ``table`` less the fewest of the ``droppable`` columns (by header, left out in that
    order) that its numbers need to fit ``width`` cells uncut (:func:`numbers_fit`), and the headers
    left out. When even all of them are not enough, all are left out (the layout then cuts)."""
    dropped: list[str] = []
    headers = {column.header for column in table.columns}
    for header in (h for h in droppable if h in headers):
        if numbers_fit(table, width):
            break
        table = without(table, (header,))
        dropped.append(header)
    return table, tuple(dropped)


def left_out_line(headers: Sequence[str], width: int) -> str:
    """Return the line that says which columns were left out to fit ``width`` cells ('' for none)."""
    if not headers:
        return ""
    return f"left out to fit {width} columns: {', '.join(headers)} (a wider COLUMNS shows them)"


def _column_widths(table: TextTable, width: int) -> list[int]:
    natural = [cell_width(column.header) if table.boxed else 0 for column in table.columns]
    for row in table.rows:
        for index, cell in enumerate(row):
            natural[index] = max(natural[index], cell_width(cell))
    count = len(natural)
    chrome = 3 * count + 1 if table.boxed else table.gap * max(0, count - 1)
    room = width - chrome
    if sum(natural) <= room:
        return natural
    # Text columns give way first, the widest first (the largest cap that fits, never below the
    # floor); numbers (right-justified columns) are cut only when the text alone cannot make room.
    text = [not column.right for column in table.columns]
    widths = _fitted(natural, text, room)
    return widths if sum(widths) <= room else _fitted(widths, [True] * count, room)


def _fitted(widths: list[int], cuttable: list[bool], room: int) -> list[int]:
    """``widths`` with the ``cuttable`` ones capped at the largest cap (not below MIN_CUT_WIDTH)
    under which the sum fits ``room``, or at the floor when none does."""
    cap = max(widths)
    while cap > MIN_CUT_WIDTH and sum(_capped(widths, cuttable, cap)) > room:
        cap -= 1
    return _capped(widths, cuttable, cap)


def _capped(widths: list[int], cuttable: list[bool], cap: int) -> list[int]:
    """Each cuttable width cut to ``cap``, but not below MIN_CUT_WIDTH (nor above what it was)."""
    return [
        max(min(w, MIN_CUT_WIDTH), min(w, cap)) if cut else w for w, cut in zip(widths, cuttable, strict=True)
    ]


def _rule(parts: tuple[str, str, str, str], widths: list[int]) -> str:
    left, fill, join, right = parts
    return left + join.join(fill * (w + 2) for w in widths) + right


def _cell_lines(cell: str, column: Column, width: int) -> list[str]:
    if cell_width(cell) <= width:
        return [cell]
    return wrap(cell, width) if column.fold else [cut(cell, width)]


def _padded(text: str, column: Column, width: int, bold: tuple[str, str]) -> str:
    space = " " * (width - cell_width(text))
    shown = f"{bold[0]}{text}{bold[1]}" if column.bold and text and bold[0] else text
    return space + shown if column.right else shown + space


def _row_lines(
    row: tuple[str, ...],
    columns: tuple[Column, ...],
    widths: list[int],
    borders: tuple[str, str, str],
    bold: tuple[str, str],
) -> list[str]:
    left, join, right = borders
    lines = _padded_lines(row, columns, widths, bold)
    return [f"{left} " + f" {join} ".join(parts) + f" {right}" for parts in lines]


def _grid_lines(
    row: tuple[str, ...], columns: tuple[Column, ...], widths: list[int], gap: int, bold: tuple[str, str]
) -> list[str]:
    return [(" " * gap).join(parts).rstrip() for parts in _padded_lines(row, columns, widths, bold)]


def _padded_lines(
    row: tuple[str, ...], columns: tuple[Column, ...], widths: list[int], bold: tuple[str, str]
) -> list[list[str]]:
    """The row's cells line by line (a folded cell takes several), each padded to its column."""
    cells = [_cell_lines(cell, column, w) for cell, column, w in zip(row, columns, widths, strict=True)]
    height = max(len(lines) for lines in cells)
    return [
        [
            _padded(lines[index] if index < len(lines) else "", column, w, bold)
            for lines, column, w in zip(cells, columns, widths, strict=True)
        ]
        for index in range(height)
    ]

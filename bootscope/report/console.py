"""The consoles that commands print to.

Every console here has rich's emoji codes and highlighting off: the text that reaches it holds run
names, variant names, kernel specs and log lines, and ``debian:cloud`` must not print as ``debian☁``
(rich's ``:cloud:``). Markup stays on for bootscope's own strings, so every untrusted string is passed
as ``rich.text.Text`` or through ``rich.markup.escape``.

The stdout consoles are as wide as :func:`bootscope.report.screen.stdout_width_cells` says (the
terminal's width, or ``COLUMNS``, or 80 in a pipe), as the glance view of ``analyze`` is, and they
write through :class:`TrimmedLines`: rich pads every table cell to its column, and a line that ends
in spaces is noise in a diff, a CI log or a mail.
"""

from __future__ import annotations

import re
import sys
from typing import IO, TextIO, cast

from rich.console import Console

from bootscope.report.screen import stdout_width_cells

# Spaces at the end of a line, before any SGR codes (rich's styles) that close it.
_TRAILING_SPACES = re.compile(r" +((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)
_SPACES_AT_END = re.compile(r" +((?:\x1b\[[0-9;]*m)*)\Z")


class TrimmedLines:
    """A text stream around ``stream`` that drops the spaces that end a line.

    Spaces at the end of a write that does not end its line are held back until the next write
    shows whether the line goes on (they are then written) or ends (they are dropped).
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._held_spaces = ""

    def write(self, text: str) -> int:
        """Write ``text`` less its lines' trailing spaces; return ``len(text)``, as a stream does."""
        whole = self._held_spaces + text
        self._held_spaces = ""
        done, newline, rest = whole.rpartition("\n")
        trimmed = _TRAILING_SPACES.sub(r"\1", done) + newline if newline else ""
        held = _SPACES_AT_END.search(rest)
        if held is not None and not held.group(1):
            self._held_spaces = rest[held.start() :]
            rest = rest[: held.start()]
        self.stream.write(trimmed + rest)
        return len(text)

    def flush(self) -> None:
        """Flush the stream (spaces still held back end the output, so they are never written)."""
        self.stream.flush()

    def isatty(self) -> bool:
        """Return whether the stream is a terminal (rich styles only then)."""
        return self.stream.isatty()

    def fileno(self) -> int:
        """Return the stream's file descriptor; raises OSError (io.UnsupportedOperation) without one."""
        return self.stream.fileno()

    @property
    def encoding(self) -> str:
        """The stream's encoding (utf-8 when it says none)."""
        return getattr(self.stream, "encoding", None) or "utf-8"


def output_console() -> Console:
    """Return a Console for stdout, fitted to :func:`stdout_width_cells` (80 columns in a pipe
    unless ``COLUMNS`` says otherwise): tables fit that width, longer lines wrap at spaces, and no
    line ends in spaces. ``print_json`` is not wrapped (rich prints JSON with soft wrap)."""
    # rich calls only write, flush, isatty, fileno and encoding, which TrimmedLines has
    trimmed = cast("IO[str]", TrimmedLines(sys.stdout))
    return Console(file=trimmed, width=stdout_width_cells(sys.stdout), highlight=False, emoji=False)


def view_console() -> Console:
    """Return a Console for the views meant to be read on screen, such as one boot's analysis with
    ``--verbose``: the same as :func:`output_console`."""
    return output_console()


def error_console() -> Console:
    """Return a Console for stderr (progress, notes, "wrote FILE")."""
    return Console(stderr=True, highlight=False, emoji=False)

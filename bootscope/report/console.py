"""The consoles that commands print to.

Every console here has rich's emoji codes and highlighting off: the text that reaches it holds run
names, variant names, kernel specs and log lines, and ``debian:cloud`` must not print as ``debian☁``
(rich's ``:cloud:``). Markup stays on for bootscope's own strings, so every untrusted string is passed
as ``rich.text.Text`` or through ``rich.markup.escape``.
"""

from __future__ import annotations

from rich.console import Console

PIPED_WIDTH = 140  # columns when the output goes to a file or a pipe: tables stay whole in CI logs


def output_console() -> Console:
    """Return a Console for stdout: the terminal's width, or at least PIPED_WIDTH columns otherwise.

    Piped output ignores a narrower ``COLUMNS`` (rich would cut table cells to fit it, and test
    runners set it). Plain lines are not wrapped (soft wrap), so paths and reasons stay whole for grep
    and copy-paste; tables fit the width.
    """
    console = Console(highlight=False, emoji=False, soft_wrap=True)
    if not console.is_terminal:
        return Console(highlight=False, emoji=False, soft_wrap=True, width=max(console.width, PIPED_WIDTH))
    return console


def view_console() -> Console:
    """Return a Console for stdout that fits the terminal (or ``COLUMNS``, 80 when piped without it)
    and wraps long lines: for views meant to be read on screen, such as one boot's analysis."""
    return Console(highlight=False, emoji=False)


def error_console() -> Console:
    """Return a Console for stderr (progress, notes, "wrote FILE")."""
    return Console(stderr=True, highlight=False, emoji=False)

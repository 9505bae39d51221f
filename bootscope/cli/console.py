"""The console that commands print their main output to."""

from __future__ import annotations

from rich.console import Console

PIPED_WIDTH = 140  # columns when the output goes to a file or a pipe: tables stay whole in CI logs


def output_console() -> Console:
    """Return a Console for stdout: the terminal's width, or at least PIPED_WIDTH columns otherwise.

    Piped output ignores a narrower ``COLUMNS`` (rich would cut table cells to fit it, and test
    runners set it). Plain lines are not wrapped (soft wrap), so paths and reasons stay whole for grep
    and copy-paste; tables fit the width.
    """
    console = Console(highlight=False, soft_wrap=True)
    if not console.is_terminal:
        return Console(highlight=False, soft_wrap=True, width=max(console.width, PIPED_WIDTH))
    return console

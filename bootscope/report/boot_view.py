"""One boot on the terminal: the glance view (plain text), or with ``--verbose`` the full view (rich).

``analyze LOG`` and ``analyze --run`` both print a boot through :func:`show_breakdown`.
"""

from __future__ import annotations

from bootscope.model import Breakdown
from bootscope.report.screen import Screen
from bootscope.report.text_glance import render_glance


def show_breakdown(breakdown: Breakdown, screen: Screen, heading: str, top_n: int, *, verbose: bool) -> None:
    """Print ``heading`` as a rule, then one boot's glance view on ``screen``, or with ``verbose``
    its full view (with rich, imported only then); returns None."""
    if verbose:
        from rich.text import Text

        from bootscope.report.console import view_console
        from bootscope.report.text import render_breakdown

        console = view_console()
        console.rule(Text(heading), style="bold")
        render_breakdown(breakdown, console, top_n)
    else:
        screen.rule(heading)
        render_glance(breakdown, screen, top_n)

"""One-line messages on stderr beside a command's output: warnings, and the reason for an exit code.

Plain ``print`` (no rich): a command that prints only these need not import a console.
"""

from __future__ import annotations

import sys


def warning(line: str) -> None:
    """Print ``bootscope: warning: LINE`` to stderr."""
    print(f"bootscope: warning: {line}", file=sys.stderr)


def say(line: str) -> None:
    """Print ``bootscope: LINE`` to stderr (why a command exits as it does)."""
    print(f"bootscope: {line}", file=sys.stderr)

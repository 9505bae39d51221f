"""Which files a list of log paths names: each a file, a directory of logs, ``-`` (stdin) or a glob.

One reading for every command that takes several logs per side (``compare``, ``diff``, ``check``,
``baseline save``), so that ``--a-logs`` means the same thing everywhere. A glob is expanded here
because a quoted pattern (``--a-logs 'before/*.log'``) reaches bootscope unexpanded, and an unquoted
one would hand the option only its first file.
"""

from __future__ import annotations

import glob
from collections.abc import Sequence
from pathlib import Path

from bootscope.errors import InputError

STDIN = "-"
_GLOB_CHARACTERS = frozenset("*?[")


def log_files(paths: Sequence[Path]) -> list[Path]:
    """Return the log files that ``paths`` name, in the order given: a file as itself, ``-`` as
    itself (stdin), a directory as its files in name order (dot files and sub-directories left
    out), and a path that does not exist but holds ``*``, ``?`` or ``[`` as the files it matches
    (sorted; ``**`` crosses directories). A directory may hold no file: the caller says that no
    boot was found.

    Raises InputError for a path that neither exists nor matches a file."""
    found: list[Path] = []
    for path in paths:
        if str(path) == STDIN or path.is_file():
            found.append(path)
        elif path.is_dir():
            found += sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
        elif _GLOB_CHARACTERS & set(str(path)):
            matches = sorted(Path(p) for p in glob.glob(str(path), recursive=True) if Path(p).is_file())
            if not matches:
                raise InputError(f"{path}: the pattern matches no file")
            found += matches
        else:
            raise InputError(f"{path}: no such file or directory")
    return found


def side_label(paths: Sequence[Path], fallback: str) -> str:
    """Return a short name for one side's logs: the last part of the first path that is not a
    pattern (``logs/before/*.log`` is ``before``), or ``fallback`` when there is none."""
    for part in reversed(Path(paths[0]).parts if paths else ()):
        if not _GLOB_CHARACTERS & set(part) and part not in (STDIN, "/", "."):
            return part
    return fallback

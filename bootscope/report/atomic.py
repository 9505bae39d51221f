"""Write an output file whole or not at all: a temporary file beside it, renamed over it at the end.

A report, trace or plot written in place and interrupted (Ctrl-C, a full disk) leaves a half file that
looks like a result. Written to a temporary file in the same directory (same file system, so the rename
is atomic) and renamed with ``os.replace``, the target holds either the old file or the whole new one.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from bootscope.errors import InputError


def _current_umask() -> int:
    # Only readable by setting it; set straight back. mkstemp makes 0600 files, and an output file
    # should get the mode a plain open() would have given it.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomically(path: Path, write: Callable[[Path], None]) -> None:
    """Call ``write`` with a temporary path beside ``path`` (same suffix, for writers that read the
    format from it), then rename it over ``path``. On any error or interrupt the temporary file is
    removed and ``path`` is left as it was. Raises InputError when the directory is not writable or
    ``write`` fails with an OSError; other exceptions from ``write`` pass through."""
    directory = path.parent if str(path.parent) else Path(".")
    try:
        handle, temporary_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=directory)
    except OSError as error:
        raise InputError(f"cannot write {path}: {error.strerror or error}") from error
    os.close(handle)
    temporary = Path(temporary_name)
    try:
        write(temporary)
        os.chmod(temporary, 0o666 & ~_current_umask())
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise InputError(f"cannot write {path}: {error.strerror or error}") from error
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_text_atomically(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all; raises InputError as write_atomically."""

    def write(temporary: Path) -> None:
        temporary.write_text(text, encoding="utf-8")

    write_atomically(path, write)

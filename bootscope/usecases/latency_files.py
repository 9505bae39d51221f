"""``bootscope latency analyze FILE...``: per-thread tail tables from cyclictest, oslat and rtla output.

Apart from :mod:`bootscope.usecases.latency` (a stored experiment, numpy and the store) so that
reading a few files imports neither.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bootscope.analyze.latency import LatencyRow, summarize_run
from bootscope.errors import InputError
from bootscope.parse.latency import parse_latency_text
from bootscope.sources.files import read_text_lines


@dataclass(frozen=True, slots=True)
class LatencyFiles:
    """Every thread's row of every file, in file order, and the warnings the tools' output gave."""

    rows: tuple[LatencyRow, ...]
    warnings: tuple[str, ...]


def read_text(path: str) -> str:
    """Return the whole text of ``path`` ('-' is stdin; .gz/.xz/.zst decompressed).
    Raises InputError for a missing, empty or unreadable file."""
    source = read_text_lines(path)
    text = "\n".join(source)
    if not text.strip():
        raise InputError(f"{path}: empty")
    return text


def analyze_latency_files(paths: Sequence[str], confidence: float) -> LatencyFiles:
    """Return the per-thread rows (cycles, min/avg/max, p50 to p99.99 with intervals at
    ``confidence``, in us) of the latency tool output in ``paths``. Raises InputError for
    ``confidence`` outside (0, 1) or a file that cannot be read, ParseError for output no tool wrote."""
    if not 0 < confidence < 1:
        raise InputError(f"--confidence must lie between 0 and 1, not {confidence}")
    rows: list[LatencyRow] = []
    warnings: list[str] = []
    for path in paths:
        run = parse_latency_text(read_text(path), "stdin" if path == "-" else path)
        rows.extend(summarize_run(run, confidence))
        warnings.extend(run.warnings)
    return LatencyFiles(tuple(rows), tuple(warnings))

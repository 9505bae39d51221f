"""parse stage: detect a log's format, turn text lines into LogLines and split them into boots.

Public API: ``parse_log`` (whole log in memory), ``iter_boots`` (streaming, one boot at a time) and
``parse_captured`` (re-parse lines captured by a source, keeping their host times).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bootscope.model import LogLine
from bootscope.parse.formats import FORMATS, detect_format
from bootscope.parse.stream import BootStream

__all__ = ["FORMATS", "BootStream", "ParsedLog", "detect_format", "iter_boots", "parse_captured", "parse_log"]


@dataclass(frozen=True, slots=True)
class ParsedLog:
    """A whole parsed log: its format, its boots in order, and the parser's warnings."""

    format: str
    boots: tuple[tuple[LogLine, ...], ...]
    warnings: tuple[str, ...]


def iter_boots(lines: Iterable[str], fmt: str = "auto") -> BootStream:
    """Return a lazy stream of boots (tuples of LogLine) parsed from text lines.

    ``fmt`` is 'auto' or one of FORMATS. Raises InputError for an unknown format (at once) and
    ParseError while iterating if no line carries a timestamp.
    """
    return BootStream(lines, fmt)


def parse_log(lines: Iterable[str], fmt: str = "auto") -> ParsedLog:
    """Return every boot of a log, parsed in memory (see ``iter_boots`` for the streaming form).

    Raises InputError for an unknown format and ParseError if no line carries a timestamp.
    """
    stream = BootStream(lines, fmt)
    boots = tuple(stream)
    return ParsedLog(stream.format, boots, tuple(stream.warnings))


def parse_captured(lines: Iterable[LogLine], fmt: str = "auto") -> ParsedLog:
    """Return the boots of lines captured by a source (only ``text`` and ``host_ns`` set).

    Each text is parsed again for guest time, level, caller etc.; its ``host_ns`` is kept. A captured
    line whose text holds no timestamp stays untimed. Raises like ``parse_log``.
    """
    stream = BootStream(lines, fmt, keep_host_ns=True)  # type: ignore[arg-type]
    boots = tuple(stream)
    return ParsedLog(stream.format, boots, tuple(stream.warnings))

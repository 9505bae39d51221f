"""parse stage: detect a log's format, turn text lines into LogLines and split them into boots.

Public API: ``parse_log`` (whole log in memory), ``iter_boots`` (streaming, one boot at a time) and
``parse_captured`` (re-parse lines captured by a source, keeping their host times).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any

from bootscope.model import LogLine
from bootscope.parse.columns import BootColumns, columns_from_lines
from bootscope.parse.formats import FORMATS, check_format, detect_format
from bootscope.parse.stream import DETECT_SAMPLE_LINES, BootStream

if TYPE_CHECKING:
    from bootscope.parse.chunked import BlockBoots

# A dmesg log of at most this many characters in all is read line by line (``LineBoots``), not by the
# block scan: that takes under 20 ms there, less than importing numpy, which the scan needs.
SMALL_LOG_CHARS = 256 * 1024

__all__ = [
    "FORMATS",
    "BlockBoots",
    "BootColumns",
    "BootStream",
    "LineBoots",
    "ParsedLog",
    "detect_format",
    "iter_boots",
    "parse_captured",
    "parse_log",
    "scan_boots",
]


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


class LineBoots:
    """BootStream's boots as BootColumns (for the formats that ``BlockBoots`` does not scan)."""

    def __init__(self, stream: BootStream) -> None:
        self.stream = stream

    @property
    def format(self) -> str:
        return self.stream.format

    @property
    def warnings(self) -> list[str]:
        return self.stream.warnings

    @property
    def boot_count(self) -> int:
        return self.stream.boot_count

    def __iter__(self) -> Iterator[BootColumns]:
        return map(columns_from_lines, self.stream)


def scan_boots(
    blocks: Iterable[str], fmt: str = "auto", *, line_path_chars: int = SMALL_LOG_CHARS
) -> BlockBoots | LineBoots:
    """Return a lazy stream of boots (as BootColumns) of a log given as blocks of whole lines.

    ``blocks`` as ``TextSource.blocks`` yields them. A dmesg or console log of more than
    ``line_path_chars`` characters is scanned a block at a time (``BlockBoots``), any other log
    line by line (``LineBoots``); the boots are the same either way, those ``iter_boots`` finds.
    Raises InputError for an unknown format (at once), ParseError while iterating if no line
    carries a timestamp.
    """
    fmt = check_format(fmt)
    pending = iter(blocks)
    peeked: list[str] = []
    if fmt == "auto":
        sample: list[str] = []
        for block in pending:
            peeked.append(block)
            need = DETECT_SAMPLE_LINES - len(sample)
            sample.extend(block.split("\n", need)[:need])
            if len(sample) >= DETECT_SAMPLE_LINES:
                break
        fmt = detect_format(sample)
    if fmt == "dmesg":
        # read ahead until the log is known to be small or known not to be
        peeked_chars = sum(map(len, peeked))
        while peeked_chars <= line_path_chars:
            more = next(pending, None)
            if more is None:
                break
            peeked.append(more)
            peeked_chars += len(more)
        if peeked_chars > line_path_chars:
            from bootscope.parse.chunked import BlockBoots

            return BlockBoots(chain(peeked, pending))
    ordered = chain(peeked, pending)
    lines = (line for block in ordered for line in block.split("\n"))
    return LineBoots(BootStream(lines, fmt))


def __getattr__(name: str) -> Any:
    """``BlockBoots`` is imported on first use: it needs numpy, which a small log does without."""
    if name == "BlockBoots":
        from bootscope.parse.chunked import BlockBoots

        return BlockBoots
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

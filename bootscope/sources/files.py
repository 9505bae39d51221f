"""Read a log from a file or stdin, one decoded line at a time.

Streaming on purpose: a 200 MB log is never held in memory, and a single huge line (a binary file
without newlines) is cut at ``max_line_bytes`` instead of being read whole.
"""

from __future__ import annotations

import codecs
import gzip
import io
import lzma
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Protocol

from bootscope.errors import InputError

MAX_LINE_BYTES = 64 * 1024
CHUNK_BYTES = 1 << 20
# the read size of `analyze` and fleet import (bootscope/parse/chunked.py): big enough that per-block
# costs vanish, small enough for memory
BLOCK_BYTES = 2 << 20
_MAGIC_GZIP = b"\x1f\x8b"
_MAGIC_XZ = b"\xfd7zXZ\x00"
_MAGIC_ZSTD = b"\x28\xb5\x2f\xfd"
_CR, _LF = 13, 10
# A block up to this size is measured with bytes methods, a bigger one with numpy (imported then):
# a small log is read without numpy's import.
SMALL_BLOCK_BYTES = 256 * 1024
# What is not a log is refused from the first bytes (after decompression), before any parsing: a
# database, an executable or a web page would otherwise be scanned whole (seconds to minutes for
# megabytes of junk) and end in "no timestamps". Below SNIFF_MIN_BYTES there is too little to judge
# (a 20-byte excerpt with 3 junk bytes is 15 % junk) and nothing slow to save.
SNIFF_BYTES = 64 * 1024
SNIFF_MIN_BYTES = 1024
# Real console captures hold a few junk bytes (line noise, a boot loader's escapes): the logs of
# tests/data hold at most 0.02 % non-text bytes, random bytes about 54 %, an ELF binary about 74 %.
MAX_NON_TEXT_SHARE = 0.30
# C0 controls that no log line holds; tab, line feed, form feed, carriage return and ESC (the
# console's colour and cursor sequences) are text.
_CONTROL_BYTES = bytes([*range(0, 9), 11, *range(14, 27), *range(28, 32), 127])
_MAGIC_SQLITE = b"SQLite format 3\x00"
_BOMS_UTF16 = (b"\xff\xfe", b"\xfe\xff")
# a saved page opens with its markup (a "saved from url" comment at most before it); a log line that
# quotes a tag later on is still a log line
_MARKUP_RE = re.compile(
    rb"<(?:!doctype\s+html|html[\s>]|\?xml\s|svg[\s>]|head[\s>]|body[\s>]|!--)", re.IGNORECASE
)


class TextSource:
    """An iterable of the lines of one log (without their line ends), decoded as UTF-8.

    Undecodable bytes become U+FFFD and are counted in ``undecodable_bytes``; lines longer than
    ``max_line_bytes`` are cut and counted in ``cut_lines``. Both are complete once iteration ended.
    Opening is checked eagerly, so a missing file fails at construction, not mid-analysis.
    """

    def __init__(self, path: str, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self.path = path
        self.max_line_bytes = max_line_bytes
        self.undecodable_bytes = 0
        self.cut_lines = 0
        self.bytes_read = 0
        self.line_count = 0
        if path != "-":
            _check_file(path)

    @property
    def warnings(self) -> tuple[str, ...]:
        """Return the reader's warnings (cut lines, undecodable bytes) as one-line strings."""
        found: list[str] = []
        if self.cut_lines:
            found.append(
                f"{self.path}: {self.cut_lines} line(s) longer than {self.max_line_bytes} bytes were cut"
            )
        if self.undecodable_bytes:
            found.append(
                f"{self.path}: {self.undecodable_bytes} byte(s) are not UTF-8 and were replaced by U+FFFD"
            )
        return tuple(found)

    def __iter__(self) -> Iterator[str]:
        for block in self.blocks():
            yield from block.split("\n")

    def blocks(self, chunk_bytes: int = CHUNK_BYTES) -> Iterator[str]:
        """Yield the log as blocks of whole lines joined by "\\n" (no line end after the last one).

        ``block.split("\\n")`` gives exactly the lines that iterating this source gives (same cuts,
        same U+FFFD replacements); a block holds at least one line. Reads ``chunk_bytes`` at a time.
        Raises InputError for an empty stream or a corrupt compressed file.
        """
        raw = _open_binary(self.path)
        try:
            head = raw.read(SNIFF_BYTES)
            refuse_non_text(head, self.path)
            yield from self._blocks(_Prefixed(head, raw), chunk_bytes)
        finally:
            if raw is not sys.stdin.buffer:
                raw.close()
        if self.bytes_read == 0:
            raise InputError(f"{self.path}: the log is empty")

    def _blocks(self, raw: _Reader, chunk_bytes: int) -> Iterator[str]:
        # Whole chunks are decoded and split at C speed; only a chunk holding a huge line or
        # undecodable bytes takes the slower, careful path.
        limit = self.max_line_bytes
        carry = b""
        while True:
            chunk = raw.read(chunk_bytes)
            if not chunk:
                break
            self.bytes_read += len(chunk)
            data = carry + chunk if carry else chunk
            end = data.rfind(b"\n")
            if end < 0:
                if len(data) > limit:
                    yield self._cut(data)
                    yield from self._skip_rest_of_line(raw, chunk_bytes)
                    carry = b""
                else:
                    carry = data
                continue
            carry = data[end + 1 :]
            yield self._block(data[: end + 1])
        if carry:
            yield self._block(carry)

    def _block(self, data: bytes) -> str:
        # Line ends and lengths are found on the bytes (a "\r" or "\n" byte is never part of a
        # UTF-8 sequence, so dropping "\r" before "\n" here equals dropping it after decoding).
        if len(data) <= SMALL_BLOCK_BYTES:
            data, newlines, longest_bytes = _line_ends_plain(data)
        else:
            data, newlines, longest_bytes = _line_ends_numpy(data)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = self._decode_counting(data)
        # the chunk ended with its last line's newline, or is the unterminated end of the log
        text = text[:-1] if text.endswith("\n") else text.rstrip("\r")
        self.line_count += newlines + (not data.endswith(b"\n"))
        # a line of more bytes than the limit may still hold fewer characters
        if longest_bytes > self.max_line_bytes:
            lines = text.split("\n")
            if max(map(len, lines)) > self.max_line_bytes:
                text = "\n".join([self._cut_text(line) for line in lines])
        return text

    def _cut_text(self, line: str) -> str:
        if len(line) <= self.max_line_bytes:
            return line
        self.cut_lines += 1
        return line[: self.max_line_bytes]

    def _cut(self, data: bytes) -> str:
        self.cut_lines += 1
        self.line_count += 1
        return data[: self.max_line_bytes].decode("utf-8", errors="replace")

    def _skip_rest_of_line(self, raw: _Reader, chunk_bytes: int) -> Iterator[str]:
        # The rest of a huge line is read in bounded pieces and dropped; what follows its newline is
        # the next line.
        while True:
            chunk = raw.read(chunk_bytes)
            if not chunk:
                return
            self.bytes_read += len(chunk)
            end = chunk.find(b"\n")
            if end >= 0:
                rest = chunk[end + 1 :]
                if rest:
                    self.bytes_read -= len(rest)  # _blocks counts them again as it reads them
                    yield from self._blocks(_Prefixed(rest, raw), chunk_bytes)
                return

    def _decode_counting(self, data: bytes) -> str:
        # Two linear decodes in C: "replace" gives one U+FFFD per undecodable sequence, and
        # "surrogateescape" one lone surrogate per undecodable byte, which "ignore" drops when encoding
        # again, so the byte count lost is the count of undecodable bytes. (Re-decoding the rest of
        # the block after each bad byte was quadratic: 40 s and more for 5 MB of random bytes.)
        self.undecodable_bytes += len(data) - len(
            data.decode("utf-8", "surrogateescape").encode("utf-8", "ignore")
        )
        return data.decode("utf-8", "replace")


def read_text_lines(path: str, max_line_bytes: int = MAX_LINE_BYTES) -> TextSource:
    """Return a lazy line source for ``path`` ('-' is stdin; .gz, .xz and .zst are decompressed).

    Raises InputError at once for a missing, unreadable or empty file or a directory, and during
    iteration for an empty stream or a corrupt compressed file.
    """
    return TextSource(path, max_line_bytes)


def non_text_share(head: bytes) -> float:
    """Return the share (0 to 1) of ``head``'s bytes that no text log holds: C0 control bytes other
    than tab, line and page ends and ESC, and bytes that are not UTF-8. 0.0 for no bytes."""
    if not head:
        return 0.0
    # a multi-byte character cut by the end of the sample is not junk: the incremental decoder
    # holds it back (getstate()'s pending bytes) instead of decoding it
    decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
    text = decoder.decode(head, final=False)
    pending = len(decoder.getstate()[0])
    undecodable = len(head) - pending - len(text.encode("utf-8", "ignore"))
    control = len(head) - len(head.translate(None, _CONTROL_BYTES))
    return (undecodable + control) / len(head)


def refuse_non_text(head: bytes, path: str) -> None:
    """Raise InputError (one line, exit 2) when ``head``, a file's first bytes after decompression,
    is not a text log: a SQLite database (a bootscope store), UTF-16 text, an HTML or XML page, or
    bytes of which more than MAX_NON_TEXT_SHARE are not text. Returns None for anything else."""
    if head.startswith(_MAGIC_SQLITE):
        raise InputError(f"{path}: is a SQLite database, not a log; did you mean --run N --db {path}?")
    if head.startswith(_BOMS_UTF16):
        raise InputError(f"{path}: is UTF-16 text; convert it first: iconv -f UTF-16 -t UTF-8 {path}")
    if _MARKUP_RE.match(head.lstrip(b"\xef\xbb\xbf \t\r\n")):
        raise InputError(
            f"{path}: looks like an HTML or XML page, not a log; "
            "save the log itself as plain text (a paste site's raw view, or copy the text)"
        )
    if len(head) < SNIFF_MIN_BYTES:
        return
    share = non_text_share(head[:SNIFF_BYTES])
    if share > MAX_NON_TEXT_SHARE:
        raise InputError(
            f"{path}: looks binary ({100 * share:.0f} % non-text bytes in the first "
            f"{min(len(head), SNIFF_BYTES) // 1024} KiB), not a text log; "
            "for a stored boot, did you mean --run N --db FILE?"
        )


def _check_file(path: str) -> None:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as error:
        raise InputError(f"{path}: cannot read: {error.strerror}") from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"{path}: is a directory, give a log file")
    if not os.access(path, os.R_OK):
        raise InputError(f"{path}: cannot read: permission denied")
    if stat.S_ISREG(info.st_mode) and info.st_size == 0:
        raise InputError(f"{path}: the log is empty")


class _StdinCopy(io.TextIOWrapper):
    """sys.stdin while :func:`stdin_rereadable` is open: a file holding what stdin gave."""


@contextmanager
def stdin_rereadable(paths: Sequence[str]) -> Iterator[None]:
    """While open, every reader of '-' reads the whole of stdin from its start, however often.

    A command that reads a log twice (analyze: kernel stamps first, then pasted systemd-analyze
    text) would find a pipe empty the second time. When ``paths`` holds '-', stdin is copied once to
    a temporary file (deleted on exit) that stands in for ``sys.stdin`` until exit; otherwise
    nothing changes. Raises OSError if the temporary file cannot be written.
    """
    if "-" not in paths or sys.stdin is None:  # no stdin at all: the reader reports it
        yield
        return
    saved = sys.stdin
    with tempfile.TemporaryFile() as copy:
        shutil.copyfileobj(saved.buffer, copy, CHUNK_BYTES)
        sys.stdin = _StdinCopy(copy)
        try:
            yield
        finally:
            sys.stdin = saved


def _open_binary(path: str) -> _Reader:
    if path == "-":
        stream: io.BufferedReader = sys.stdin.buffer  # type: ignore[assignment]
        if isinstance(sys.stdin, _StdinCopy):
            stream.seek(0)
    else:
        try:
            stream = open(path, "rb")  # noqa: SIM115 - closed by TextSource.__iter__
        except OSError as error:
            raise InputError(f"{path}: cannot read: {error.strerror}") from None
    buffered = (
        stream if isinstance(stream, io.BufferedReader | io.BufferedRandom) else io.BufferedReader(stream)
    )
    magic = buffered.peek(6)[:6]
    if magic.startswith(_MAGIC_GZIP):
        return _Guarded(gzip.GzipFile(fileobj=buffered), path)
    if magic.startswith(_MAGIC_XZ):
        return _Guarded(lzma.LZMAFile(buffered), path)
    if magic.startswith(_MAGIC_ZSTD):
        import zstandard

        # stdin stays open for a second reading (stdin_rereadable)
        reader = zstandard.ZstdDecompressor().stream_reader(buffered, closefd=path != "-")
        return _Guarded(io.BufferedReader(reader), path)
    return buffered


class _Reader(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...

    def close(self) -> None: ...


class _Prefixed:
    """A reader that first returns ``head`` (at most ``size`` bytes a read), then reads from ``inner``."""

    def __init__(self, head: bytes, inner: _Reader) -> None:
        self._head = head
        self._inner = inner

    def read(self, size: int = -1, /) -> bytes:
        if self._head:
            if size < 0 or size >= len(self._head):
                head, self._head = self._head, b""
                # the read goes on into ``inner``, as one read of the file would
                if size < 0:
                    return head + self._inner.read()
                return head + self._inner.read(size - len(head)) if size > len(head) else head
            head, self._head = self._head[:size], self._head[size:]
            return head
        return self._inner.read(size)

    def close(self) -> None:
        self._inner.close()


class _Guarded:
    """A binary reader whose decompression errors become one-line InputErrors."""

    def __init__(self, inner: _Reader, path: str) -> None:
        self._inner = inner
        self._path = path

    def read(self, size: int = -1, /) -> bytes:
        try:
            return self._inner.read(size)
        except (OSError, EOFError, lzma.LZMAError, ValueError) as error:
            raise InputError(f"{self._path}: the compressed file is corrupt or truncated ({error})") from None
        except Exception as error:  # zstandard raises its own ZstdError
            if type(error).__name__ == "ZstdError":
                raise InputError(f"{self._path}: the compressed file is corrupt ({error})") from None
            raise

    def close(self) -> None:
        self._inner.close()


def _line_ends_plain(data: bytes) -> tuple[bytes, int, int]:
    """Return ``data`` with each "\\r\\n" made "\\n", its count of "\\n" and its longest line's bytes."""
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
    return data, data.count(b"\n"), max(map(len, data.split(b"\n")))


def _line_ends_numpy(data: bytes) -> tuple[bytes, int, int]:
    """``_line_ends_plain`` with numpy, for big blocks."""
    import numpy as np

    codes = np.frombuffer(data, np.uint8)
    cr = np.flatnonzero(codes == _CR)
    if len(cr):
        # every "\r" ends a line (a console capture): deleting them all is the faster copy
        if cr[-1] + 1 < len(codes) and bool((codes[cr + 1] == _LF).all()):
            data = data.translate(None, b"\r")
        else:
            data = data.replace(b"\r\n", b"\n")
        codes = np.frombuffer(data, np.uint8)
    newlines = np.flatnonzero(codes == _LF)
    return data, len(newlines), int(np.diff(newlines, prepend=-1, append=len(codes)).max()) - 1

"""TextSource.blocks on bytes with "\\r", undecodable bytes and long lines, against a plain decode."""

from __future__ import annotations

import codecs
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bootscope.sources.files import read_text_lines

_counted: list[int] = []


def _count_and_replace(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeDecodeError)
    _counted.append(error.end - error.start)
    return "\ufffd", error.end


codecs.register_error("test_source_blocks_count", _count_and_replace)


def _reference(data: bytes, limit: int) -> tuple[list[str], int, int]:
    """Lines, undecodable bytes and cut lines as a whole-file decode gives them."""
    _counted.clear()
    text = data.decode("utf-8", errors="test_source_blocks_count").replace("\r\n", "\n")
    # the last line's end: a "\n" (after any "\r\n" became one), else trailing "\r"s at the end
    text = text[:-1] if text.endswith("\n") else text.rstrip("\r")
    lines = text.split("\n")
    cut = sum(len(line) > limit for line in lines)
    return [line[:limit] for line in lines], sum(_counted), cut


_PIECES = st.sampled_from(
    [
        b"a",
        b"kernel line",
        b"\r\n",
        b"\n",
        b"\r",
        b"\r\r\n",
        b"\xe2\x82",
        b"\xe2\x82\xac",
        b"\xff",
        b"\xc3",
        "é".encode(),
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, min_size=1, max_size=60), st.integers(1, 40), st.integers(4, 400))
def test_blocks_equal_a_whole_decode(pieces: list[bytes], limit: int, chunk: int) -> None:
    data = b"".join(pieces)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log"
        path.write_bytes(data)
        source = read_text_lines(str(path), max_line_bytes=limit)
        blocks = list(source.blocks(chunk))
    lines, undecodable, cut = _reference(data, limit)
    got = "\n".join(blocks).split("\n")
    # A line of more bytes than the limit that has no line end within the bytes read so far is cut
    # in bytes while reading; else lines are cut in characters after decoding, as here.
    no_long_line = max(map(len, data.split(b"\n"))) <= limit
    one_read = chunk >= len(data) and b"\n" in data
    if no_long_line or one_read:
        assert got == lines
        assert source.cut_lines == cut
        assert source.undecodable_bytes == undecodable
        assert source.line_count == len(lines)
        return
    # A long line cut across several reads: the line structure is kept (no line lost, none split,
    # none merged), each line is its whole-decode self or a cut start of it of at most ``limit``
    # characters (a multi-byte character cut in half becomes one U+FFFD at the end; a cut in bytes
    # keeps a "\r" that a whole decode drops as the log's last line end), and every cut is counted.
    full_lines, _, _ = _reference(data, len(data) + 1)
    assert source.line_count == len(full_lines) == len(got)
    cut_here = 0
    for line, full in zip(got, full_lines, strict=True):
        if line == full:
            continue
        cut_here += 1
        assert len(line) <= limit
        assert full.startswith(line.removesuffix("\ufffd").rstrip("\r")), (line, full)
    assert source.cut_lines >= cut_here


def test_a_long_line_cut_across_reads_keeps_the_lines_around_it(tmp_path: Path) -> None:
    # 100 bytes of one line read 7 bytes at a time with a 10-byte limit: cut once, in bytes (the
    # 5th "é" is split, hence U+FFFD), the rest skipped, and the next line read whole.
    path = tmp_path / "log"
    path.write_bytes(b"first\n" + "é".encode() * 50 + b"\nlast line\n")
    source = read_text_lines(str(path), max_line_bytes=9)
    got = "\n".join(source.blocks(7)).split("\n")
    assert got == ["first", "éééé\ufffd", "last line"]
    assert (source.cut_lines, source.line_count, source.bytes_read) == (1, 3, 117)

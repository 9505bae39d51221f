"""The fast path for dmesg and console logs: boots found in whole blocks of lines, not line by line.

A block (megabytes of whole lines, ``TextSource.blocks``) is scanned at C speed: one ``findall``
gives every line's timestamp and either its initcall fields or its text, one ``map`` matches the
pattern table against those texts. Times live in numpy arrays,
boots are split on those arrays, and a LogLine is built only for a line the analysis reads (a gap's
neighbours, a CPU progress line, the lines after Run /init). The boots, splitting rules and warnings
are those of ``BootStream`` on the dmesg format (tests/parse/test_chunked.py compares the two).
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterable, Iterator
from itertools import compress, count
from typing import Any

import numpy as np
import numpy.typing as npt

from bootscope.errors import ParseError
from bootscope.model import LogLine
from bootscope.parse.columns import BootColumns, InitcallRow, KnownLine
from bootscope.parse.formats import DMESG_ANYWHERE, DMESG_PREFIX, parse_dmesg
from bootscope.parse.patterns import COMBINED, GROUP_SLICES, INITCALL_SCAN
from bootscope.parse.stream import BANNER, RESET_AFTER_S

# One row per "\n" of "\n" + block: the line's timestamp prefix ("" if untimed; its groups level,
# stamp, caller), then at the text's start either the seven fields of an initcall line
# (INITCALL_SCAN) or, for any other line, the whole text.
_LINE = re.compile(r"\n((?>" + DMESG_PREFIX + r"))?(?:" + INITCALL_SCAN.pattern + r"|([^\n]*))")
_DMESG = re.compile(DMESG_PREFIX)
_ANYWHERE = re.compile(DMESG_ANYWHERE)
# A stamp after other text on its line: console junk before a kernel line (see formats.parse_dmesg)
# (the literal "[" first, so that the scan jumps from bracket to bracket)
_EMBEDDED = re.compile(r"\[(?<!\n\[)[^\S\n]*\d{1,10}\.\d{6}\]")
_BANNER = re.compile(re.escape(BANNER))

IntArray = npt.NDArray[np.int64]
BLOCK_BYTES = 2 << 20  # read size: big enough that per-block costs vanish, small enough for memory


class BlockBoots:
    """An iterable of boots (as BootColumns) of a dmesg/console log given as blocks of whole lines.

    ``format``, ``warnings``, ``boot_count`` and ``timed_lines`` behave as BootStream's. At most one
    block (grown to hold the boot that spans it) is in memory. Raises ParseError at the end if no
    line carried a timestamp.
    """

    def __init__(self, blocks: Iterable[str]) -> None:
        self._blocks = blocks
        self.format = "dmesg"
        self.warnings: list[str] = []
        self.boot_count = 0
        self.timed_lines = 0
        self._backward_boots = 0
        self._first_backward = ""

    def __iter__(self) -> Iterator[BootColumns]:
        carry: str | None = None
        pending: list[str] = []
        pending_chars = 0
        for block in self._blocks:
            pending.append(block)
            pending_chars += len(block) + 1
            # A boot longer than a block is carried; reading at least as much again keeps the
            # rescanning of the carried part linear in the log's size.
            if carry is not None and pending_chars < len(carry):
                continue
            text = "\n".join(pending if carry is None else [carry, *pending])
            pending, pending_chars = [], 0
            carry = yield from self._scan(text, final=False)
        if carry is not None or pending:
            yield from self._scan("\n".join(pending if carry is None else [carry, *pending]), final=True)
        if self._backward_boots:
            message = (
                f"timestamps go backwards within {self._backward_boots} boot(s) ({self._first_backward});"
                " gaps are measured from the latest time seen"
            )
            self.warnings.append(message)
        if self.timed_lines == 0:
            raise ParseError("the log cannot be timed: no line carries a kernel timestamp")

    def _scan(self, text: str, *, final: bool) -> Generator[BootColumns, None, str | None]:
        """Yield the finished boots of ``text``; return the unfinished last boot's text (None if none)."""
        block = _Block(_split_embedded(text))
        bounds = [0, *block.boot_starts(), block.line_count]
        last = len(bounds) - 2
        for number in range(last + 1):
            first_line, end_line = bounds[number], bounds[number + 1]
            if number == last and not final:
                return block.text[block.starts[first_line] :]
            k0, k1 = np.searchsorted(block.timed_lines, (first_line, end_line))
            if k1 > k0:
                yield self._finish(block, first_line, end_line, int(k0), int(k1))
        return None

    def _finish(self, block: _Block, first_line: int, end_line: int, k0: int, k1: int) -> BootColumns:
        self.boot_count += 1
        self.timed_lines += k1 - k0
        times = block.times[k0:k1]
        if len(times) > 1:
            high = np.maximum.accumulate(times)
            back = times[1:] < high[:-1]
            if back.any():
                self._backward_boots += 1
                if not self._first_backward:
                    j = int(np.argmax(back))
                    line = block.line(int(block.timed_lines[k0 + j + 1]))
                    first = f"{high[j]:.6f} -> {times[j + 1]:.6f} s at '{line.text[:60]}'"
                    count = int(np.count_nonzero(back))
                    self._first_backward = f"boot {self.boot_count}: {count} time(s), first {first}"
        return block.columns(first_line, end_line, k0, k1)


class _Block:
    """The arrays of one block of lines: line starts, prefixes, times, known lines, initcall rows."""

    def __init__(self, text: str) -> None:
        self.text = text
        rows = _LINE.findall("\n" + text)
        self.line_count = n = len(rows)
        columns = tuple(zip(*rows, strict=True))
        prefixes, stamps, call_names, done_names, texts = (columns[i] for i in (0, 2, 4, 7, 11))
        prefix_len = np.fromiter(map(len, prefixes), np.int64, n)
        self.timed_lines: IntArray = np.flatnonzero(prefix_len)
        self.times = np.fromiter(map(float, filter(None, stamps)), np.float64, len(self.timed_lines))
        self.time_of_line = np.full(n, np.nan)
        self.time_of_line[self.timed_lines] = self.times
        # One array element per character, so that array positions are string positions.
        codes: npt.NDArray[Any]
        if text.isascii():
            codes = np.frombuffer(text.encode("ascii"), np.uint8)
        else:
            codes = np.frombuffer(text.encode("utf-32-le"), np.uint32)
        newlines = np.flatnonzero(codes == 10)
        self.starts: IntArray = np.concatenate(([0], newlines + 1))
        self.ends: IntArray = np.concatenate((newlines, [len(text)]))
        self.text_at: IntArray = self.starts + prefix_len
        is_initcall = np.fromiter(map(len, call_names), np.int64, n) + np.fromiter(
            map(len, done_names), np.int64, n
        )
        self.initcall_lines: IntArray = np.flatnonzero(is_initcall)
        self.initcall_rows: list[InitcallRow] = [rows[i][4:11] for i in self.initcall_lines.tolist()]
        self.known = self._known(texts)
        self._known_lines = np.array([hit[1] for hit in self.known], dtype=np.int64)

    def line(self, index: int) -> LogLine:
        """Return line ``index`` of the block, parsed as the per-line dmesg parser parses it."""
        # A block line is clean (_split_embedded ran), so the parser yields exactly one LogLine.
        parsed = next(parse_dmesg((self.text[self.starts[index] : self.ends[index]],), _ignore))
        assert parsed is not None
        return parsed

    def boot_starts(self) -> list[int]:
        """Return the lines where a new boot starts (the rules of BootStream._split)."""
        times = self.times
        if not len(times):
            return []
        positions = np.array([m.start() for m in _BANNER.finditer(self.text)], dtype=np.int64)
        lines = np.searchsorted(self.starts, positions, side="right") - 1
        banner_lines = lines[(positions == self.text_at[lines]) & (self.text_at[lines] > self.starts[lines])]
        banner_k = np.searchsorted(self.timed_lines, banner_lines)
        # For each timed line, the last earlier timed line above RESET_AFTER_S (-1 if none): a line
        # at (nearly) zero is a new boot if such a line lies within the current boot.
        big = np.where(times > RESET_AFTER_S, np.arange(len(times)), -1)
        last_big = np.concatenate(([-1], np.maximum.accumulate(big)[:-1]))
        zeros = np.flatnonzero(times <= 1e-6)
        seen = last_big[zeros]
        # Of zero lines with the same last big line only the first can split (see the docstring).
        keep = (seen >= 0) & np.concatenate(([True], seen[1:] != seen[:-1]))
        banner_set = set(banner_k.tolist())
        start = 0
        found: list[int] = []
        for k in sorted(banner_set | set(zeros[keep].tolist())):
            if k > start and (k in banner_set or last_big[k] >= start):
                found.append(int(self.timed_lines[k]))
                start = k
        return found

    def columns(self, first_line: int, end_line: int, k0: int, k1: int) -> BootColumns:
        """Return the columns of lines ``first_line``..``end_line`` (timed lines ``k0``..``k1``)."""
        lo, hi = np.searchsorted(self.initcall_lines, (first_line, end_line))
        kl, kh = np.searchsorted(self._known_lines, (first_line, end_line))
        known = [(name, index - first_line, groups, t) for name, index, groups, t in self.known[kl:kh]]
        row_s = self.time_of_line[self.initcall_lines[lo:hi]]
        initcall_s: list[float | None] = row_s.tolist()
        if np.isnan(row_s).any():
            initcall_s = [None if t != t else t for t in initcall_s]
        return BootColumns(
            line_count=end_line - first_line,
            timed_index=self.timed_lines[k0:k1] - first_line,
            timed_s=self.times[k0:k1],
            known=known,
            initcall_rows=self.initcall_rows[lo:hi],
            initcall_s=initcall_s,
            line=_Lines(self, first_line),
        )

    def _known(self, texts: tuple[str, ...]) -> list[KnownLine]:
        """Return the lines (not initcall lines) that the pattern table knows, in line order."""
        # Initcall lines have no text here (their row holds their fields), and "" matches nothing.
        matches = list(map(COMBINED.match, texts))
        found: list[KnownLine] = []
        slices = GROUP_SLICES
        for index in compress(count(), matches):
            m = matches[index]
            if m is not None and m.lastgroup is not None:
                first, last = slices[m.lastgroup]
                t = float(self.time_of_line[index])
                found.append((m.lastgroup, index, m.groups()[first:last], None if t != t else t))
        return found


class _Lines:
    """``line(i)`` of one boot inside a block."""

    def __init__(self, block: _Block, first_line: int) -> None:
        self._block = block
        self._first = first_line

    def __call__(self, index: int) -> LogLine:
        return self._block.line(self._first + index)


def _split_embedded(text: str) -> str:
    """Return ``text`` with console junk before a kernel stamp on its own line, as parse_dmesg splits it."""
    found = [m.start() for m in _EMBEDDED.finditer("\n" + text)]
    if not found:
        return text
    lines = text.split("\n")
    changed = False
    line_no, position, done = 0, 0, -1
    for start in found:
        line_no += text.count("\n", position, start - 1)
        position = start - 1
        if line_no == done:
            continue
        done = line_no
        line = lines[line_no]
        if _DMESG.match(line) is not None:
            continue
        m = _ANYWHERE.search(line)
        if m is not None:
            head = line[: m.start()]
            lines[line_no] = (head + "\n" if head.strip() else "") + line[m.start() :]
            changed = True
    return "\n".join(lines) if changed else text


def _ignore(_message: str) -> None:
    return None

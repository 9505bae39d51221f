"""The fast path for dmesg and console logs: boots found in whole blocks of lines, not line by line.

A block (megabytes of whole lines, ``TextSource.blocks``) is read with few passes in C and numpy
and Python objects only for the lines the analysis needs: numpy finds the line starts and reads
printk's fixed-width stamps from their digit positions (the regex reads any other stamp, line by
line); numpy reads the fields of the initcall lines (bootscope/parse/initcall_rows.py) and one
anchored ``match`` per candidate line finds the other lines that the pattern table knows. Times
live in numpy arrays, boots are split on those arrays, and a LogLine is built only for a line the
analysis reads (a gap's neighbours, a CPU progress line, the lines after Run /init). The boots,
splitting rules and warnings are those of ``BootStream`` on the dmesg format
(tests/parse/test_chunked.py compares the two).
"""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from bootscope.errors import ParseError
from bootscope.model import LogLine
from bootscope.parse.block_probes import (
    DMESG,
    FIXED_WIDTH,
    KNOWN,
    KNOWN_SLICES,
    LBRACKET,
    LITERAL_BYTES,
    LT,
    MAY_START_KNOWN,
    SPACE,
    IntArray,
    after_indent_ok,
    find_all,
    fixed_stamps,
    pinned_ok,
    split_embedded,
    starts_with_any,
)
from bootscope.parse.columns import BootColumns, InitcallColumns, KnownLine
from bootscope.parse.early_counter import BANNER, CLOCK_ZERO_S, CPU_LINE, restart_at, starts_early
from bootscope.parse.formats import parse_dmesg, stamp_s
from bootscope.parse.initcall_rows import PAD_CHARS, read_initcalls
from bootscope.parse.stream import RESET_AFTER_S


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
        blocks = iter(self._blocks)
        block = next(blocks, None)
        while block is not None:
            # one block read ahead: the last block is scanned as final, so that its last boot is
            # not carried over and scanned a second time (a small log is one block)
            following = next(blocks, None)
            pending.append(block)
            pending_chars += len(block) + 1
            block = following
            # A boot longer than a block is carried; reading at least as much again keeps the
            # rescanning of the carried part linear in the log's size.
            if following is not None and carry is not None and pending_chars < len(carry):
                continue
            text = "\n".join(pending if carry is None else [carry, *pending])
            pending, pending_chars = [], 0
            carry = yield from self._scan(text, final=following is None)
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
        block = _Block(text, *split_embedded(text))
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
        restart = restart_at(times, block.timed_text(k0)) if len(times) > 1 else None
        if len(times) > 1:
            high = np.maximum.accumulate(times)
            if restart is not None:  # timekeeping starts there: not a step back (early_counter.py)
                high[restart:] = np.maximum.accumulate(times[restart:])
            back = times[1:] < high[:-1]
            if restart is not None:
                back[restart - 1] = False
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

    def __init__(self, text: str, codes: npt.NDArray[np.uint8], starts: IntArray, ends: IntArray) -> None:
        self.text = text
        self.starts = starts
        self.ends = ends
        self.line_count = len(self.starts)
        # Zero padding, so that the fixed-width probes past a short last line stay inside the array.
        padded = np.concatenate((codes, np.zeros(PAD_CHARS, codes.dtype)))
        fixed, stamp_us = fixed_stamps(padded, self.starts)
        self._fixed = fixed
        after_bracket = padded[self.starts + FIXED_WIDTH]
        prefix_len = np.where(fixed, FIXED_WIDTH + (after_bracket == SPACE), 0)
        time_of_line = np.where(fixed, stamp_us / 1e6, np.nan)  # one rounding: float("1.234567")
        first = padded[self.starts]
        odd_lines = np.flatnonzero(~fixed & ((first == LBRACKET) | (first == LT)))
        self._odd_lines(odd_lines.tolist(), prefix_len, time_of_line)
        self.time_of_line = time_of_line
        self.timed_lines: IntArray = np.flatnonzero(~np.isnan(time_of_line))
        self.times = time_of_line[self.timed_lines]
        self.text_at: IntArray = self.starts + prefix_len
        self.initcall_lines, self.initcalls = self._initcalls(padded)
        self.known = self._known(padded)
        # lines that may be userspace lines (breakdown._first_userspace): untimed ones, and those
        # whose prefix may carry a facility ("<13>[...")
        self._maybe_userspace = np.flatnonzero(np.isnan(time_of_line) | (first == LT))
        self._known_lines = np.array([hit[1] for hit in self.known], dtype=np.int64)

    def _odd_lines(
        self, lines: list[int], prefix_len: IntArray, time_of_line: npt.NDArray[np.float64]
    ) -> None:
        """Parse, with the regex, the lines that start like a stamp but not a fixed-width one.

        Fills their prefix length and time in place (an untimed line's text starts at its first
        character).
        """
        for index in lines:
            m = DMESG.match(self.text, self.starts[index], self.ends[index])
            if m is not None:
                prefix_len[index] = m.end() - self.starts[index]
                time_of_line[index] = stamp_s(m.group(2))

    def _initcalls(self, padded: npt.NDArray[Any]) -> tuple[IntArray, InitcallColumns]:
        """Return the initcall lines (ascending) and their columns."""
        # a line whose text starts with an initcall literal is an initcall line if the rest matches
        lines = np.flatnonzero(starts_with_any(padded, self.text_at, LITERAL_BYTES))
        fields, keep = read_initcalls(self.text, padded, lines, self.text_at, self.ends)
        lines = lines[keep]
        return lines, fields.columns(keep, self.time_of_line[lines])

    def _known(self, padded: npt.NDArray[Any]) -> list[KnownLine]:
        """Return the lines (not initcall lines) that the pattern table knows, in line order."""
        text_at, ends = self.text_at, self.ends
        first = np.minimum(padded[text_at], 128)
        second = np.minimum(padded[text_at + 1], 128)
        maybe = MAY_START_KNOWN[first, second] & (text_at < ends)
        maybe[self.initcall_lines] = False
        lines = pinned_ok(padded, text_at, np.flatnonzero(maybe), first)
        lines = lines[after_indent_ok(padded, text_at[lines], first[lines])]
        match = KNOWN.match
        text = self.text
        slices = KNOWN_SLICES
        found: list[KnownLine] = []
        rows = zip(
            lines.tolist(),
            text_at[lines].tolist(),
            ends[lines].tolist(),
            self.time_of_line[lines].tolist(),
            strict=True,
        )
        for index, start, end, t in rows:
            m = match(text, start, end)
            if m is not None and m.lastgroup is not None:
                first_group, last_group = slices[m.lastgroup]
                found.append((m.lastgroup, index, m.groups()[first_group:last_group], None if t != t else t))
        return found

    def line(self, index: int) -> LogLine:
        """Return line ``index`` of the block, parsed as the per-line dmesg parser parses it."""
        if self._fixed[index]:
            # printk's own stamp and nothing else in the prefix: text and time are known already
            # (the analysis asks for a few dozen lines per boot: gap ends, CPU lines)
            start, end = int(self.text_at[index]), int(self.ends[index])
            return LogLine(self.text[start:end], float(self.time_of_line[index]))
        # A block line is clean (split_embedded cut it), so the parser yields exactly one LogLine.
        parsed = next(parse_dmesg((self.text[self.starts[index] : self.ends[index]],), _ignore))
        assert parsed is not None
        return parsed

    def boot_starts(self) -> list[int]:
        """Return the lines where a new boot starts (the rules of BootStream._split)."""
        times = self.times
        if not len(times):
            return []
        positions = np.array(find_all(self.text, BANNER), dtype=np.int64)
        lines = np.searchsorted(self.starts, positions, side="right") - 1
        banner_lines = lines[(positions == self.text_at[lines]) & (self.text_at[lines] > self.starts[lines])]
        banner_k = np.searchsorted(self.timed_lines, banner_lines)
        # For each timed line, the last earlier timed line above RESET_AFTER_S (-1 if none): a line
        # at (nearly) zero is a new boot if such a line lies within the current boot.
        big = np.where(times > RESET_AFTER_S, np.arange(len(times)), -1)
        last_big = np.concatenate(([-1], np.maximum.accumulate(big)[:-1]))
        zeros = np.flatnonzero(times <= CLOCK_ZERO_S)
        seen = last_big[zeros]
        # Of zero lines with the same last big line only the first can split (see the docstring).
        keep = (seen >= 0) & np.concatenate(([True], seen[1:] != seen[:-1]))
        banner_set = set(banner_k.tolist())
        start = 0
        found: list[int] = []
        for k in sorted(banner_set | set(zeros[keep].tolist())):
            if k not in banner_set and self._early_restart(start, k):
                continue  # the kernel's clock starts after early cycle-counter stamps (early_counter.py)
            if k > start and (k in banner_set or last_big[k] >= start):
                if k in banner_set and times[k - 1] > CLOCK_ZERO_S and self._cpu_line_before(k):
                    if k - 1 == start:
                        continue  # the boot began at arm's CPU line, stamped after zero (stream.py)
                    k -= 1
                elif k in banner_set and last_big[k] < start:
                    if times[k] <= CLOCK_ZERO_S and times[start:k].max() <= CLOCK_ZERO_S:
                        continue  # arm's "Booting Linux on physical CPU" before its banner (stream.py)
                    while k - 1 > start and times[k - 1] <= CLOCK_ZERO_S:
                        k -= 1  # the clock-zero lines just before a banner are the new boot's
                found.append(int(self.timed_lines[k]))
                start = k
        return found

    def _early_restart(self, start: int, k: int) -> bool:
        """Whether timed line ``k`` is the first below the stamp of timed line ``start``, the first
        of a boot that starts with early cycle-counter stamps (bootscope.parse.early_counter)."""
        times = self.times
        if not starts_early(self.timed_text(start), float(times[start])):
            return False
        return bool(times[start:k].min() >= times[start]) if k > start else False

    def timed_text(self, k: int) -> str:
        """The text of timed line ``k`` (its stamp and prefix left out)."""
        index = int(self.timed_lines[k])
        return self.text[int(self.text_at[index]) : int(self.ends[index])]

    def _cpu_line_before(self, k: int) -> bool:
        """Whether timed line ``k - 1`` is arm's CPU line and the line right before banner line ``k``."""
        index = int(self.timed_lines[k - 1])
        if index + 1 != int(self.timed_lines[k]):
            return False
        return self.text.startswith(CPU_LINE, int(self.text_at[index]), int(self.ends[index]))

    def columns(self, first_line: int, end_line: int, k0: int, k1: int) -> BootColumns:
        """Return the columns of lines ``first_line``..``end_line`` (timed lines ``k0``..``k1``)."""
        lo, hi = np.searchsorted(self.initcall_lines, (first_line, end_line))
        kl, kh = np.searchsorted(self._known_lines, (first_line, end_line))
        known = [(name, index - first_line, groups, t) for name, index, groups, t in self.known[kl:kh]]
        ul, uh = np.searchsorted(self._maybe_userspace, (first_line, end_line))
        return BootColumns(
            line_count=end_line - first_line,
            timed_index=self.timed_lines[k0:k1] - first_line,
            timed_s=self.times[k0:k1],
            known=known,
            initcalls=self.initcalls.slice(int(lo), int(hi)),
            line=_Lines(self, first_line),
            maybe_userspace=self._maybe_userspace[ul:uh] - first_line,
        )


class _Lines:
    """``line(i)`` of one boot inside a block."""

    def __init__(self, block: _Block, first_line: int) -> None:
        self._block = block
        self._first = first_line

    def __call__(self, index: int) -> LogLine:
        return self._block.line(self._first + index)


def _ignore(_message: str) -> None:
    return None

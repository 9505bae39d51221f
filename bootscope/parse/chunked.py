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

import codecs
import re
from collections.abc import Generator, Iterable, Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from bootscope.errors import ParseError
from bootscope.model import LogLine
from bootscope.parse.columns import INITCALL_PATTERNS, BootColumns, InitcallColumns, KnownLine
from bootscope.parse.formats import DMESG_ANYWHERE, DMESG_PREFIX, parse_dmesg, stamp_s
from bootscope.parse.initcall_rows import PAD_CHARS, read_initcalls
from bootscope.parse.native import scanner
from bootscope.parse.patterns import INITCALL_LITERALS, start_pairs, start_prefixes, table_scan
from bootscope.parse.stream import BANNER, CLOCK_ZERO_S, CPU_LINE, RESET_AFTER_S

# printk's own stamp, "[%5lu.%06lu]" (kernel/printk/printk.c print_time()), without a caller id
# after it: the form that numpy reads from fixed positions (see _fixed_stamps). Any other form that
# DMESG_PREFIX accepts is read by that regex, line by line (_Block._odd_lines). As a regex:
# \[(?: {4}\d| {3}\d{2}| {2}\d{3}| \d{4}|\d{5})\.\d{6}\](?!\[) ?
_FIXED_WIDTH = 14  # "[" + 5 + "." + 6 + "]"
_NL, _SPACE, _LBRACKET, _LT, _DOT, _RBRACKET, _ZERO, _NINE = (ord(c) for c in "\n [<.]09")
_LITERAL_BYTES = tuple(literal.encode("ascii") for literal in INITCALL_LITERALS)
# The other lines the pattern table knows (initcall lines are read apart), tried only on the lines
# whose text starts with a character that can start a match (any non-ASCII one can).
_KNOWN, _KNOWN_SLICES, _ = table_scan(INITCALL_PATTERNS)
_MAY_START_KNOWN = np.zeros((129, 129), dtype=bool)  # [first, second character], 128: non-ASCII
_MAY_START_KNOWN[128, :] = True
for _first, _seconds in start_pairs(INITCALL_PATTERNS).items():
    _MAY_START_KNOWN[ord(_first), [*map(ord, _seconds)] if _seconds is not None else slice(None)] = True
# A candidate whose first character is pinned (patterns.start_prefixes) must start with one of its
# literals.
_PINNED = np.zeros(129, dtype=bool)
_PINNED[[ord(c) for c in start_prefixes(INITCALL_PATTERNS)]] = True
_PREFIX_BYTES = tuple(q.encode("ascii") for qs in start_prefixes(INITCALL_PATTERNS).values() for q in qs)
_DMESG = re.compile(DMESG_PREFIX)
_ANYWHERE = re.compile(DMESG_ANYWHERE)
# A stamp after other text on its line: console junk before a kernel line (see formats.parse_dmesg)
# (the literal "[" first, so that the scan jumps from bracket to bracket)
_EMBEDDED = re.compile(r"\[(?<!\n\[)(?:[^\S\n]+|(?=\d{5}))\d{1,10}\.\d{6}\]")
# what can follow such a "[": whitespace but a line end (any non-ASCII character may be one) or a digit
_IS_INDENT = np.zeros(129, dtype=bool)  # whitespace that stays on its line (patterns._SP)
_IS_INDENT[[c for c in range(128) if chr(c).isspace() and c != _NL]] = True
_INDENT_PROBE = 24  # characters looked at; a longer run of whitespace stays a candidate
_MAY_FOLLOW_BRACKET = np.zeros(129, dtype=bool)
_MAY_FOLLOW_BRACKET[[*(c for c in range(128) if chr(c).isspace() or chr(c).isdigit()), 128]] = True
_MAY_FOLLOW_BRACKET[_NL] = False

IntArray = npt.NDArray[np.int64]


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
        block = _Block(text, *_split_embedded(text))
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

    def __init__(self, text: str, codes: npt.NDArray[np.uint8], starts: IntArray, ends: IntArray) -> None:
        self.text = text
        self.starts = starts
        self.ends = ends
        self.line_count = len(self.starts)
        # Zero padding, so that the fixed-width probes past a short last line stay inside the array.
        padded = np.concatenate((codes, np.zeros(PAD_CHARS, codes.dtype)))
        fixed, stamp_us = _fixed_stamps(padded, self.starts)
        self._fixed = fixed
        after_bracket = padded[self.starts + _FIXED_WIDTH]
        prefix_len = np.where(fixed, _FIXED_WIDTH + (after_bracket == _SPACE), 0)
        time_of_line = np.where(fixed, stamp_us / 1e6, np.nan)  # one rounding: float("1.234567")
        first = padded[self.starts]
        odd_lines = np.flatnonzero(~fixed & ((first == _LBRACKET) | (first == _LT)))
        self._odd_lines(odd_lines.tolist(), prefix_len, time_of_line)
        self.time_of_line = time_of_line
        self.timed_lines: IntArray = np.flatnonzero(~np.isnan(time_of_line))
        self.times = time_of_line[self.timed_lines]
        self.text_at: IntArray = self.starts + prefix_len
        self.initcall_lines, self.initcalls = self._initcalls(padded)
        self.known = self._known(padded)
        # lines that may be userspace lines (breakdown._first_userspace): untimed ones, and those
        # whose prefix may carry a facility ("<13>[...")
        self._maybe_userspace = np.flatnonzero(np.isnan(time_of_line) | (first == _LT))
        self._known_lines = np.array([hit[1] for hit in self.known], dtype=np.int64)

    def _odd_lines(
        self, lines: list[int], prefix_len: IntArray, time_of_line: npt.NDArray[np.float64]
    ) -> None:
        """Parse, with the regex, the lines that start like a stamp but not a fixed-width one.

        Fills their prefix length and time in place (an untimed line's text starts at its first
        character).
        """
        for index in lines:
            m = _DMESG.match(self.text, self.starts[index], self.ends[index])
            if m is not None:
                prefix_len[index] = m.end() - self.starts[index]
                time_of_line[index] = stamp_s(m.group(2))

    def _initcalls(self, padded: npt.NDArray[Any]) -> tuple[IntArray, InitcallColumns]:
        """Return the initcall lines (ascending) and their columns."""
        # a line whose text starts with an initcall literal is an initcall line if the rest matches
        lines = np.flatnonzero(_starts_with_any(padded, self.text_at, _LITERAL_BYTES))
        fields, keep = read_initcalls(self.text, padded, lines, self.text_at, self.ends)
        lines = lines[keep]
        return lines, fields.columns(keep, self.time_of_line[lines])

    def _known(self, padded: npt.NDArray[Any]) -> list[KnownLine]:
        """Return the lines (not initcall lines) that the pattern table knows, in line order."""
        text_at, ends = self.text_at, self.ends
        first = np.minimum(padded[text_at], 128)
        second = np.minimum(padded[text_at + 1], 128)
        maybe = _MAY_START_KNOWN[first, second] & (text_at < ends)
        maybe[self.initcall_lines] = False
        lines = _pinned_ok(padded, text_at, np.flatnonzero(maybe), first)
        lines = lines[_after_indent_ok(padded, text_at[lines], first[lines])]
        match = _KNOWN.match
        text = self.text
        slices = _KNOWN_SLICES
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
        # A block line is clean (_split_embedded cut it), so the parser yields exactly one LogLine.
        parsed = next(parse_dmesg((self.text[self.starts[index] : self.ends[index]],), _ignore))
        assert parsed is not None
        return parsed

    def boot_starts(self) -> list[int]:
        """Return the lines where a new boot starts (the rules of BootStream._split)."""
        times = self.times
        if not len(times):
            return []
        positions = np.array(_find_all(self.text, BANNER), dtype=np.int64)
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


def _pinned_ok(padded: npt.NDArray[Any], text_at: IntArray, lines: IntArray, first: IntArray) -> IntArray:
    """Return ``lines`` less those whose first character is pinned but whose text starts with none of
    its literals (a literal never holds a line end, so no probe reads on into the next line)."""
    hit = _starts_with_any(padded, text_at[lines], _PREFIX_BYTES)
    kept: IntArray = lines[~_PINNED[first[lines]] | hit]
    return kept


def _starts_with_any(
    padded: npt.NDArray[Any], probe_at: IntArray, literals: tuple[bytes, ...]
) -> npt.NDArray[np.bool_]:
    """Return which positions ``probe_at`` of ``padded`` start one of ``literals``: by the C scanner
    where it is built, else by numpy, which narrows each literal's rows character by character
    (no literal is longer than PAD_CHARS, so no probe leaves ``padded``)."""
    if scanner is not None:
        found = np.zeros(len(probe_at), dtype=np.uint8)
        scanner.starts_with(padded, np.ascontiguousarray(probe_at), literals, found)
        return found.view(bool)
    hit = np.zeros(len(probe_at), dtype=bool)
    first = padded[probe_at]
    for literal in literals:
        rows = np.flatnonzero(first == literal[0])
        for offset, code in enumerate(literal[1:], start=1):
            rows = rows[padded[probe_at[rows] + offset] == code]
        hit[rows] = True
    return hit


def _after_indent_ok(padded: npt.NDArray[Any], at: IntArray, first: IntArray) -> npt.NDArray[np.bool_]:
    """Return which candidates to keep: a line that starts with whitespace only if the first other
    character of its first _INDENT_PROBE ones may follow whitespace (``_MAY_START_KNOWN``); the
    only entry that starts with whitespace, cpu_progress, is whitespace and then "#"."""
    indented = np.flatnonzero(_IS_INDENT[first])
    keep = np.ones(len(at), dtype=bool)
    if not len(indented):
        return keep
    probe_at = at[indented]
    undecided = np.ones(len(indented), dtype=bool)  # only whitespace so far
    allowed = np.zeros(len(indented), dtype=bool)
    for offset in range(1, _INDENT_PROBE):
        code = np.minimum(padded[probe_at + offset], 128)
        other = undecided & ~_IS_INDENT[code]
        allowed |= other & _MAY_START_KNOWN[_SPACE, code]
        undecided &= ~other
    keep[indented] = allowed | undecided
    return keep


def _split_embedded(text: str) -> tuple[npt.NDArray[np.uint8], IntArray, IntArray]:
    """Return the codes of ``text`` (``_codes``) and where its lines start and end, console junk
    before a kernel stamp being a line of its own, as parse_dmesg splits it.

    Such a line is cut where its stamp starts: the junk before it becomes a line of its own (none
    if it is only whitespace), and the stamp starts the next. The text itself is not rebuilt, so
    positions in the codes are positions in ``text``; a line's end may be a cut, not a newline.
    """
    codes = _codes(text)
    newlines = np.flatnonzero(codes == _NL)
    starts: IntArray = np.concatenate(([0], newlines + 1))
    ends: IntArray = np.concatenate((newlines, [len(codes)]))
    # numpy finds the brackets that can start an embedded stamp (not at a line's start, then
    # whitespace or a digit); the regex checks only those
    brackets = np.flatnonzero(codes == _LBRACKET)
    brackets = brackets[(brackets > 0) & (brackets + 1 < len(codes))]
    brackets = brackets[codes[brackets - 1] != _NL]
    after = codes[brackets + 1]
    brackets = brackets[_MAY_FOLLOW_BRACKET[np.minimum(after, 128)]]
    # a digit right after the "[" must be the first of five ("systemd[1]:" is not a stamp)
    digit_run = np.ones(len(brackets), dtype=bool)
    for offset in range(1, 6):
        probe = np.minimum(brackets + offset, len(codes) - 1)
        digit_run &= (codes[probe] >= _ZERO) & (codes[probe] <= _NINE) & (brackets + offset < len(codes))
    first_digit = (codes[brackets + 1] >= _ZERO) & (codes[brackets + 1] <= _NINE)
    brackets = brackets[~first_digit | digit_run]
    cut_lines: list[int] = []  # the line each cut is in, and where its stamp starts
    stamps_at: list[int] = []
    junk_lines: list[bool] = []  # whether the junk before it stays, as a line of its own
    last_line = -1
    match = _EMBEDDED.match
    for bracket in brackets.tolist():
        if match(text, bracket) is None:
            continue
        line = int(np.searchsorted(starts, bracket, side="right")) - 1
        if line == last_line:
            continue
        last_line = line
        line_start, line_end = int(starts[line]), int(ends[line])
        if _DMESG.match(text, line_start, line_end) is not None:
            continue
        m = _ANYWHERE.search(text, line_start, line_end)
        if m is not None:
            cut_lines.append(line)
            stamps_at.append(m.start())
            junk_lines.append(bool(text[line_start : m.start()].strip()))
    if not cut_lines:
        return codes, starts, ends
    cut, stamp_at, junk = np.array(cut_lines), np.array(stamps_at, dtype=np.int64), np.array(junk_lines)
    junk_start = starts[cut[junk]]
    starts[cut] = stamp_at
    starts = np.insert(starts, cut[junk], junk_start)
    ends = np.insert(ends, cut[junk], stamp_at[junk])
    return codes, starts, ends


def _find_all(text: str, literal: str) -> list[int]:
    """Return where ``literal`` starts in ``text``, each occurrence after the end of the one before
    (str.find: much faster than a regex on a text that holds non-Latin-1 characters)."""
    found: list[int] = []
    at = text.find(literal)
    while at >= 0:
        found.append(at)
        at = text.find(literal, at + len(literal))
    return found


def _ignore(_message: str) -> None:
    return None


def _codes(text: str) -> npt.NDArray[np.uint8]:
    """Return ``text`` as one byte per character (array positions = string positions).

    ASCII and Latin-1 characters are their own code; any other character becomes 0x80, since every
    probe of the scan compares with ASCII codes only and treats all of 0x80-0xFF alike.
    """
    if scanner is not None:
        return np.frombuffer(scanner.codes(text), np.uint8)
    return np.frombuffer(text.encode("latin-1", errors=_NOT_LATIN1), np.uint8)


def _one_high_byte(error: UnicodeError) -> tuple[str, int]:
    """Codec error handler: each character latin-1 cannot encode becomes one 0x80."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return "\x80" * (error.end - error.start), error.end


_NOT_LATIN1 = "bootscope-one-high-byte"
codecs.register_error(_NOT_LATIN1, _one_high_byte)


def _fixed_stamps(padded: npt.NDArray[Any], starts: IntArray) -> tuple[npt.NDArray[np.bool_], IntArray]:
    """Return which lines start with a fixed-width stamp (the regex above) and its value in us
    (0 where there is none): by the C scanner where it is built, else by numpy."""
    if scanner is None:
        return _numpy_fixed_stamps(padded, starts)
    fixed = np.zeros(len(starts), dtype=np.uint8)
    stamp_us = np.zeros(len(starts), dtype=np.int64)
    scanner.fixed_stamps(np.ascontiguousarray(padded), np.ascontiguousarray(starts), fixed, stamp_us)
    return fixed.view(bool), stamp_us


def _numpy_fixed_stamps(padded: npt.NDArray[Any], starts: IntArray) -> tuple[npt.NDArray[np.bool_], IntArray]:
    """Return which lines start with a fixed-width stamp (the regex above) and its value in us (0
    where there is none).

    The probes read fixed offsets from each line start; the whole test is the regex's, position by
    position: "[", five characters of spaces then at least one digit, ".", six digits, "]", and no
    "[" of a caller id after it.
    """

    def at(offset: int) -> npt.NDArray[np.int64]:
        return padded[starts + offset].astype(np.int64)

    fixed = (at(0) == _LBRACKET) & (at(6) == _DOT) & (at(13) == _RBRACKET) & (at(14) != _LBRACKET)
    seconds = np.zeros(len(starts), np.int64)
    digit_seen = np.zeros(len(starts), dtype=bool)
    for offset in range(1, 6):
        digit = at(offset) - _ZERO
        is_digit = (digit >= 0) & (digit <= 9)
        # a space only before the first digit
        fixed &= is_digit | ((at(offset) == _SPACE) & ~digit_seen)
        digit_seen |= is_digit
        seconds = seconds * 10 + np.where(is_digit, digit, 0)
    fixed &= digit_seen
    micros = np.zeros(len(starts), np.int64)
    for offset in range(7, 13):
        digit = at(offset) - _ZERO
        fixed &= (digit >= 0) & (digit <= 9)
        micros = micros * 10 + digit
    return fixed, np.where(fixed, seconds * 1_000_000 + micros, 0)

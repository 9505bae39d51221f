"""The block scan's byte probes: a block's text as one byte per character, its line starts and ends,
printk's fixed-width stamps read from digit positions, and the filters that pick the candidate lines
the pattern table may match (first characters, pinned literal prefixes, whitespace before them).

Each probe runs in C where the optional extension is built (:mod:`bootscope.parse.native`) and in
numpy otherwise; tests/parse/test_native_scan.py holds the two equal. :mod:`bootscope.parse.chunked`
builds boots from what these return.
"""

from __future__ import annotations

import codecs
import re
from typing import Any

import numpy as np
import numpy.typing as npt

from bootscope.parse.columns import INITCALL_PATTERNS
from bootscope.parse.formats import DMESG_ANYWHERE, DMESG_PREFIX
from bootscope.parse.native import scanner
from bootscope.parse.patterns import INITCALL_LITERALS, start_pairs, start_prefixes, table_scan

# printk's own stamp, "[%5lu.%06lu]" (kernel/printk/printk.c print_time()), without a caller id
# after it: the form that numpy reads from fixed positions (see fixed_stamps). Any other form that
# DMESG_PREFIX accepts is read by that regex, line by line (_Block._odd_lines). As a regex:
# \[(?: {4}\d| {3}\d{2}| {2}\d{3}| \d{4}|\d{5})\.\d{6}\](?!\[) ?
FIXED_WIDTH = 14  # "[" + 5 + "." + 6 + "]"
_NL, SPACE, LBRACKET, LT, _DOT, _RBRACKET, _ZERO, _NINE = (ord(c) for c in "\n [<.]09")
LITERAL_BYTES = tuple(literal.encode("ascii") for literal in INITCALL_LITERALS)
# The other lines the pattern table knows (initcall lines are read apart), tried only on the lines
# whose text starts with a character that can start a match (any non-ASCII one can).
KNOWN, KNOWN_SLICES, _ = table_scan(INITCALL_PATTERNS)
MAY_START_KNOWN = np.zeros((129, 129), dtype=bool)  # [first, second character], 128: non-ASCII
MAY_START_KNOWN[128, :] = True
for _first, _seconds in start_pairs(INITCALL_PATTERNS).items():
    MAY_START_KNOWN[ord(_first), [*map(ord, _seconds)] if _seconds is not None else slice(None)] = True
# A candidate whose first character is pinned (patterns.start_prefixes) must start with one of its
# literals.
_PINNED = np.zeros(129, dtype=bool)
_PINNED[[ord(c) for c in start_prefixes(INITCALL_PATTERNS)]] = True
_PREFIX_BYTES = tuple(q.encode("ascii") for qs in start_prefixes(INITCALL_PATTERNS).values() for q in qs)
DMESG = re.compile(DMESG_PREFIX)
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


def pinned_ok(padded: npt.NDArray[Any], text_at: IntArray, lines: IntArray, first: IntArray) -> IntArray:
    """Return ``lines`` less those whose first character is pinned but whose text starts with none of
    its literals (a literal never holds a line end, so no probe reads on into the next line)."""
    hit = starts_with_any(padded, text_at[lines], _PREFIX_BYTES)
    kept: IntArray = lines[~_PINNED[first[lines]] | hit]
    return kept


def starts_with_any(
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


def after_indent_ok(padded: npt.NDArray[Any], at: IntArray, first: IntArray) -> npt.NDArray[np.bool_]:
    """Return which candidates to keep: a line that starts with whitespace only if the first other
    character of its first _INDENT_PROBE ones may follow whitespace (``MAY_START_KNOWN``); the
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
        allowed |= other & MAY_START_KNOWN[SPACE, code]
        undecided &= ~other
    keep[indented] = allowed | undecided
    return keep


def split_embedded(text: str) -> tuple[npt.NDArray[np.uint8], IntArray, IntArray]:
    """Return the codes of ``text`` (``char_codes``) and where its lines start and end, console junk
    before a kernel stamp being a line of its own, as parse_dmesg splits it.

    Such a line is cut where its stamp starts: the junk before it becomes a line of its own (none
    if it is only whitespace), and the stamp starts the next. The text itself is not rebuilt, so
    positions in the codes are positions in ``text``; a line's end may be a cut, not a newline.
    """
    codes = char_codes(text)
    newlines = np.flatnonzero(codes == _NL)
    starts: IntArray = np.concatenate(([0], newlines + 1))
    ends: IntArray = np.concatenate((newlines, [len(codes)]))
    # numpy finds the brackets that can start an embedded stamp (not at a line's start, then
    # whitespace or a digit); the regex checks only those
    brackets = np.flatnonzero(codes == LBRACKET)
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
        if DMESG.match(text, line_start, line_end) is not None:
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


def find_all(text: str, literal: str) -> list[int]:
    """Return where ``literal`` starts in ``text``, each occurrence after the end of the one before
    (str.find: much faster than a regex on a text that holds non-Latin-1 characters)."""
    found: list[int] = []
    at = text.find(literal)
    while at >= 0:
        found.append(at)
        at = text.find(literal, at + len(literal))
    return found


def char_codes(text: str) -> npt.NDArray[np.uint8]:
    """Return ``text`` as one byte per character (array positions = string positions).

    ASCII and Latin-1 characters are their own code; any other character becomes 0x80, since every
    probe of the scan compares with ASCII codes only and treats all of 0x80-0xFF alike.
    """
    if scanner is not None:
        return np.frombuffer(scanner.codes(text), np.uint8)
    return np.frombuffer(text.encode("latin-1", errors=NOT_LATIN1), np.uint8)


def _one_high_byte(error: UnicodeError) -> tuple[str, int]:
    """Codec error handler: each character latin-1 cannot encode becomes one 0x80."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return "\x80" * (error.end - error.start), error.end


NOT_LATIN1 = "bootscope-one-high-byte"
codecs.register_error(NOT_LATIN1, _one_high_byte)


def fixed_stamps(padded: npt.NDArray[Any], starts: IntArray) -> tuple[npt.NDArray[np.bool_], IntArray]:
    """Return which lines start with a fixed-width stamp (the regex above) and its value in us
    (0 where there is none): by the C scanner where it is built, else by numpy."""
    if scanner is None:
        return numpy_fixed_stamps(padded, starts)
    fixed = np.zeros(len(starts), dtype=np.uint8)
    stamp_us = np.zeros(len(starts), dtype=np.int64)
    scanner.fixed_stamps(np.ascontiguousarray(padded), np.ascontiguousarray(starts), fixed, stamp_us)
    return fixed.view(bool), stamp_us


def numpy_fixed_stamps(padded: npt.NDArray[Any], starts: IntArray) -> tuple[npt.NDArray[np.bool_], IntArray]:
    """Return which lines start with a fixed-width stamp (the regex above) and its value in us (0
    where there is none).

    The probes read fixed offsets from each line start; the whole test is the regex's, position by
    position: "[", five characters of spaces then at least one digit, ".", six digits, "]", and no
    "[" of a caller id after it.
    """

    def at(offset: int) -> npt.NDArray[np.int64]:
        return padded[starts + offset].astype(np.int64)

    fixed = (at(0) == LBRACKET) & (at(6) == _DOT) & (at(13) == _RBRACKET) & (at(14) != LBRACKET)
    seconds = np.zeros(len(starts), np.int64)
    digit_seen = np.zeros(len(starts), dtype=bool)
    for offset in range(1, 6):
        digit = at(offset) - _ZERO
        is_digit = (digit >= 0) & (digit <= 9)
        # a space only before the first digit
        fixed &= is_digit | ((at(offset) == SPACE) & ~digit_seen)
        digit_seen |= is_digit
        seconds = seconds * 10 + np.where(is_digit, digit, 0)
    fixed &= digit_seen
    micros = np.zeros(len(starts), np.int64)
    for offset in range(7, 13):
        digit = at(offset) - _ZERO
        fixed &= (digit >= 0) & (digit <= 9)
        micros = micros * 10 + digit
    return fixed, np.where(fixed, seconds * 1_000_000 + micros, 0)

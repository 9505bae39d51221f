"""The initcall_debug lines of a block read into columns, with numpy instead of a regex per line.

Two thirds of the lines of an ``initcall_debug`` log are ``calling  NAME+0xOFF/0xSIZE @ PID`` or
``initcall NAME+0xOFF/0xSIZE returned RET after USECS usecs`` (init/main.c
trace_initcall_start_cb() / trace_initcall_finish_cb()). numpy reads the lines of exactly that form
from character positions: where the fields start and end (spans into the block's text) and their
numbers; each distinct name token is read once, by the name part of the same regex. Any other line
that starts like an initcall line (a module, an offset that is not "+0x<hex>/0x<hex>", a character
the regex counts as whitespace, a number of more than 18 digits) is read by ``INITCALL_SCAN`` itself,
so both give the same fields; tests/parse/test_initcall_rows.py compares them line by line.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from bootscope.parse.columns import InitcallColumns
from bootscope.parse.native import scanner
from bootscope.parse.patterns import INITCALL_SCAN, INITCALL_TOKEN, initcall_duration_us

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
# Zeros after a block's codes: the probes read at most 9 characters past a line's end, and at most
# 62 before a block's start (negative indices: the padding again), which no check accepts.
PAD_CHARS = 64
_MAX_DIGITS = 18  # int64 holds any 18-digit number; longer ones are the regex's
_NAME_AT = len("calling  ")  # == len("initcall ")
_MINUS, _ZERO, _C = (ord(c) for c in "-0c")
# Name tokens are compared as up to this many 8-byte words; longer ones as strings.
_TOKEN_WORDS = 12
_WORD_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)  # the low k bytes
_HASH_STEP = np.uint64(0x9E3779B97F4A7C15)  # any odd multiplier; equality is checked word by word


class TextSpans(Sequence[str]):
    """The substrings ``text[starts[i]:ends[i]]`` as a sequence, each built when it is read."""

    def __init__(self, text: str, starts: IntArray, ends: IntArray) -> None:
        self._text = text
        self._starts = starts
        self._ends = ends

    def __len__(self) -> int:
        return len(self._starts)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> TextSpans: ...

    def __getitem__(self, index: int | slice) -> str | TextSpans:
        if isinstance(index, slice):
            return TextSpans(self._text, self._starts[index], self._ends[index])
        return self._text[self._starts.item(index) : self._ends.item(index)]

    def pick(self, rows: list[int]) -> list[str]:
        """Return the substrings at ``rows`` (indices), in that order."""
        text = self._text
        starts, ends = self._starts[rows].tolist(), self._ends[rows].tolist()
        return [text[start:end] for start, end in zip(starts, ends, strict=True)]

    def __iter__(self) -> Iterator[str]:
        text = self._text
        for start, end in zip(self._starts.tolist(), self._ends.tolist(), strict=True):
            yield text[start:end]


class InitcallFields:
    """The fields of a block's initcall lines (one row per line, in line order).

    Spans (``spans[field, 0 start / 1 end, row]``, fields name, module, pid, ret) index the block's
    text, an absent field is the empty span 0..0; ``name_ids`` are equal exactly where names are;
    ``usecs`` holds a returned line's duration (0 for a calling); ``failing`` marks the returned
    lines whose return code is not 0.
    """

    def __init__(self, text: str, rows: int) -> None:
        self.text = text
        self.is_call: BoolArray = np.zeros(rows, dtype=bool)
        self.spans = np.zeros((4, 2, rows), np.int64)
        self.name_ids = np.zeros(rows, np.int64)
        self.ids: dict[str, int] = {}  # name -> its id in name_ids
        self.usecs: list[int] = []
        self.failing: BoolArray = np.zeros(rows, dtype=bool)

    def columns(self, keep: IntArray, times_s: npt.NDArray[np.float64]) -> InitcallColumns:
        """Return rows ``keep`` (ascending), at guest times ``times_s`` (s), as InitcallColumns."""
        spans = self.spans[:, :, keep]
        text = self.text
        is_call = self.is_call[keep]
        usecs = self.usecs
        durations_us = [usecs[i] for i in keep[~is_call].tolist()]
        return InitcallColumns(
            names=TextSpans(text, spans[0, 0], spans[0, 1]),
            modules=TextSpans(text, spans[1, 0], spans[1, 1]),
            pids=TextSpans(text, spans[2, 0], spans[2, 1]),
            rets=TextSpans(text, spans[3, 0], spans[3, 1]),
            is_call=is_call,
            name_ids=self.name_ids[keep],
            times_s=times_s,
            durations_us=durations_us,
            failing=self.failing[keep],
            done_before=np.concatenate(([0], np.cumsum(~is_call))),
        )


def read_initcalls(
    text: str,
    padded: npt.NDArray[Any],
    lines: IntArray,
    text_at: IntArray,
    ends: IntArray,
    *,
    native: bool = True,
) -> tuple[InitcallFields, IntArray]:
    """Read the initcall lines ``lines`` (their text starts with an initcall literal at ``text_at``).

    ``padded`` is the block's character codes followed by PAD_CHARS zeros (so that no probe needs
    a bounds check). Returns the fields of the lines ``INITCALL_SCAN`` matches and which of
    ``lines`` those are (indices into ``lines``). The fields are read by the C scanner where it is
    built (``native`` False: by numpy all the same), else by numpy. Raises nothing: a line
    neither can read is the regex's.
    """
    fields = InitcallFields(text, len(lines))
    start, end = text_at[lines], ends[lines]
    scan = scanner if native else None
    raw = _numpy_fields(padded, start, end) if scan is None else _native_fields(scan, padded, start, end)
    call, ok = raw.is_call, raw.ok
    name_at = start + _NAME_AT
    name_end = _names(text, fields, name_at, raw.token_end, ok, raw.group)
    spans = fields.spans
    spans[0, 0], spans[0, 1] = name_at, name_end
    spans[2, 0], spans[2, 1] = np.where(call, raw.pid_at, 0), np.where(call, end, 0)
    spans[3, 0], spans[3, 1] = np.where(call, 0, raw.ret_at), np.where(call, 0, raw.ret_end)
    fields.is_call[:] = call
    fields.failing[:] = raw.failing
    fields.usecs = raw.usecs.tolist()
    _regex_rows(fields, start, end, ok)
    return fields, np.flatnonzero(ok)


@dataclass
class _RawFields:
    """What the C scanner or numpy reads of each initcall line (positions index the block's codes).

    ``ok``: the line has exactly the expected form; ``usecs``: a returned line's duration, 0 for a
    calling; ``group``: the first line with the same name token, -1 where not grouped (a line
    that is not ok, or one to read alone).
    """

    ok: BoolArray
    is_call: BoolArray
    token_end: IntArray
    pid_at: IntArray
    ret_at: IntArray
    ret_end: IntArray
    usecs: IntArray
    failing: BoolArray
    group: IntArray


def _native_fields(scan: ModuleType, padded: npt.NDArray[Any], start: IntArray, end: IntArray) -> _RawFields:
    """Read the fields with the C scanner (bootscope/parse/_scan.c)."""
    out = np.empty((scan.OUT_COLUMNS, len(start)), np.int64)
    scan.initcall_rows(padded, np.ascontiguousarray(start), np.ascontiguousarray(end), out)
    ok, is_call, token_end, pid_at, ret_at, ret_end, usecs, failing, group = out
    return _RawFields(
        ok.astype(bool),
        is_call.astype(bool),
        token_end,
        pid_at,
        ret_at,
        ret_end,
        usecs,
        failing.astype(bool),
        group,
    )


def _numpy_fields(padded: npt.NDArray[Any], start: IntArray, end: IntArray) -> _RawFields:
    """Read the fields with numpy, from character positions."""
    call = padded[start] == _C
    ok = np.where(call, _literal(padded, start, "calling  "), _literal(padded, start, "initcall "))
    # The fields are read from the line's end backwards: "... @ PID" or "... returned RET after
    # USECS usecs" (a line with more after that is the regex's); the name token is what precedes.
    name_at = start + _NAME_AT
    pid_at, _, pid_ok = _digits_before(padded, end)
    pid_ok &= _literal(padded, pid_at - 3, " @ ")
    usecs_end = end - len(" usecs")
    usecs_at, usecs, usecs_ok = _digits_before(padded, usecs_end)
    ret_end = usecs_at - len(" after ")
    ret_digits_at, ret_value, ret_ok = _digits_before(padded, ret_end)
    ret_at = ret_digits_at - (padded[ret_digits_at - 1] == _MINUS)
    done_ok = _literal(padded, usecs_end, " usecs") & usecs_ok & _literal(padded, ret_end, " after ")
    done_ok &= ret_ok & _literal(padded, ret_at - len(" returned "), " returned ")
    token_end = np.where(call, pid_at - 3, ret_at - len(" returned "))
    ok &= np.where(call, pid_ok, done_ok) & (token_end > name_at)
    group = _token_groups(padded, name_at, token_end, ok)
    return _RawFields(
        ok,
        call,
        token_end,
        pid_at,
        ret_at,
        ret_end,
        np.where(call, 0, usecs),
        ~call & (ret_value != 0),
        group,
    )


def _token_groups(
    padded: npt.NDArray[Any], name_at: IntArray, token_end: IntArray, ok: BoolArray
) -> IntArray:
    """Return, per line, the first line with the same name token (-1: not ok, or to be read alone).

    No string per line: each token is read as little-endian 8-byte words and hashed, and every
    line is then compared word by word with the first line of its hash, so a group holds equal
    tokens only. A line not equal to that first line (a collision) or whose token is longer than
    _TOKEN_WORDS words is left alone.
    """
    group = np.full(len(ok), -1, np.int64)
    rows = np.flatnonzero(ok)
    if not len(rows):
        return group
    at = name_at[rows]
    lengths = token_end[rows] - at
    words = _token_words(padded, at, lengths)
    hashed = np.zeros(len(rows), np.uint64)
    for word in words:
        hashed = hashed * _HASH_STEP + word
    hashed = hashed * _HASH_STEP + lengths.astype(np.uint64)
    _, first, inverse = np.unique(hashed, return_index=True, return_inverse=True)
    leader = first[inverse.reshape(-1)]  # the first row (among rows) of each row's hash
    same = (lengths == lengths[leader]) & (lengths <= 8 * _TOKEN_WORDS)
    for word in words:
        same &= word == word[leader]
    group[rows[same]] = rows[leader[same]]
    return group


def _names(
    text: str, fields: InitcallFields, name_at: IntArray, token_end: IntArray, ok: BoolArray, group: IntArray
) -> IntArray:
    """Return where each line's name ends and fill ``fields.name_ids``; clear ``ok`` where unsure.

    Lines of a ``group`` share their first line's reading; each distinct token is read once by
    ``INITCALL_TOKEN``: a token it cannot read whole (it holds a character that is whitespace to
    the regex) leaves its lines to the regex.
    """
    name_len = np.full(len(ok), -1, np.int64)
    name_id = np.zeros(len(ok), np.int64)
    ids = fields.ids
    by_token: dict[str, tuple[int, int]] = {}  # token -> (name length or -1, name id)

    def read(row: int) -> None:
        token = text[int(name_at[row]) : int(token_end[row])]
        known = by_token.get(token)
        if known is None:
            m = INITCALL_TOKEN.fullmatch(token)
            known = (-1, 0) if m is None else (len(m.group(1)), ids.setdefault(m.group(1), len(ids)))
            by_token[token] = known
        name_len[row], name_id[row] = known

    rows = np.flatnonzero(ok)
    leaders = rows[group[rows] == rows]  # in line order: names get their ids in order of appearance
    for row in leaders.tolist():
        read(row)
    grouped = rows[group[rows] >= 0]
    name_len[grouped] = name_len[group[grouped]]
    name_id[grouped] = name_id[group[grouped]]
    for row in rows[group[rows] < 0].tolist():
        read(row)
    ok[rows[name_len[rows] < 0]] = False
    fields.name_ids[rows] = name_id[rows]
    name_end = name_at.copy()
    name_end[rows] += name_len[rows]
    return name_end


def _token_words(padded: npt.NDArray[Any], at: IntArray, lengths: IntArray) -> list[npt.NDArray[np.uint64]]:
    """Return the tokens ``padded[at:at + lengths]`` as columns of 8-byte words, zero past each end.

    Words past _TOKEN_WORDS are not read. Every read stays inside ``padded``: a word starts before
    the end of the text, and PAD_CHARS zeros follow it.
    """
    count_words = min((int(lengths.max()) + 7) // 8, _TOKEN_WORDS)
    # every byte offset of padded as the start of a little-endian 8-byte word (overlapping views)
    word_at = np.ndarray((len(padded) - 7,), dtype="<u8", buffer=padded, strides=(1,))
    last = len(word_at) - 1
    words = []
    for k in range(count_words):
        valid = np.clip(lengths - 8 * k, 0, 8)
        words.append(word_at[np.minimum(at + 8 * k, last)] & _WORD_MASKS[valid])
    return words


def _regex_rows(fields: InitcallFields, start: IntArray, end: IntArray, ok: BoolArray) -> None:
    """Read the rows numpy left (``~ok``) with INITCALL_SCAN; set ``ok`` where it matches."""
    spans = fields.spans
    ids = fields.ids
    for row in np.flatnonzero(~ok).tolist():
        m = INITCALL_SCAN.match(fields.text, int(start[row]), int(end[row]))
        if m is None or not m.group(2):
            continue
        ok[row] = True
        for field, group in enumerate((2, 3, 4, 5)):
            s, e = m.span(group)
            spans[field, :, row] = (s, e) if s >= 0 else (0, 0)
        called = m.group(1) is not None
        fields.is_call[row] = called
        fields.name_ids[row] = ids.setdefault(m.group(2), len(ids))
        fields.failing[row] = not called and int(m.group(5)) != 0
        fields.usecs[row] = 0 if called else initcall_duration_us(m.group(6), m.group(7))


def _digits_before(padded: npt.NDArray[Any], end: IntArray) -> tuple[IntArray, IntArray, BoolArray]:
    """Return where the run of ASCII digits that ends at ``end`` starts, its value, and if it is 1-18 long."""
    value = np.zeros(len(end), np.int64)
    place = np.ones(len(end), np.int64)
    length = np.zeros(len(end), np.int64)
    running = np.ones(len(end), dtype=bool)
    for k in range(1, _MAX_DIGITS + 2):
        # a run never crosses its line's start ("\n"), nor the block's (the padding's zeros at -k)
        digit = padded[end - k].astype(np.int64) - _ZERO
        running &= (digit >= 0) & (digit <= 9)
        if not running.any():
            break
        value += np.where(running, digit * place, 0)
        place = np.where(running, place * 10, place)
        length += running
    return end - length, value, (length > 0) & (length <= _MAX_DIGITS)


def _literal(padded: npt.NDArray[Any], at: IntArray, literal: str) -> BoolArray:
    """Return which positions ``at`` start ``literal``."""
    ok = padded[at] == ord(literal[0])
    for k, char in enumerate(literal[1:], start=1):
        ok &= padded[at + k] == ord(char)
    return ok  # type: ignore[no-any-return]

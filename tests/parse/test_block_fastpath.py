"""The block scan's shortcuts against what they replace: first characters, names, fixed-width stamps."""

from __future__ import annotations

import re
import re._parser as sre_parse  # the regex parser itself, to derive first characters independently
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bootscope.analyze.breakdown import analyze_boot, analyze_columns
from bootscope.errors import ParseError
from bootscope.parse import iter_boots, scan_boots
from bootscope.parse.block_probes import fixed_stamps
from bootscope.parse.patterns import INITCALL_SCAN, PATTERNS


def _first_chars(pattern: str) -> set[str] | None:
    """ASCII characters a match of ``pattern`` can start with (None: could not be derived)."""

    def of(items: list[tuple[object, object]]) -> tuple[set[str], bool] | None:
        found: set[str] = set()
        for op, arg in items:
            name = str(op)
            if name == "LITERAL":
                return found | {chr(arg)} if arg < 128 else found, False  # type: ignore[call-overload,operator]
            if name == "NOT_LITERAL" or name == "ANY":
                return None
            if name == "IN":
                chars = _class_chars(arg)  # type: ignore[arg-type]
                if chars is None:
                    return None
                return found | chars, False
            if name == "SUBPATTERN":
                inner = of(list(arg[3]))  # type: ignore[index]
                if inner is None:
                    return None
                found |= inner[0]
                if not inner[1]:
                    return found, False
                continue
            if name == "BRANCH":
                nullable = False
                for alternative in arg[1]:  # type: ignore[index]
                    inner = of(list(alternative))
                    if inner is None:
                        return None
                    found |= inner[0]
                    nullable |= inner[1]
                if not nullable:
                    return found, False
                continue
            if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                low, _high, body = arg  # type: ignore[misc]
                inner = of(list(body))
                if inner is None:
                    return None
                found |= inner[0]
                if low > 0 and not inner[1]:
                    return found, False
                continue
            if name == "AT":
                continue
            return None
        return found, True

    result = of(list(sre_parse.parse(pattern)))
    return None if result is None else result[0]


def test_declared_first_characters_cover_every_possible_match_start() -> None:
    for p in PATTERNS:
        derived = _first_chars(p.regex.pattern)
        assert derived is not None, p.name
        # [^\S\n] is a negated class the helper cannot list: cpu_progress declares whitespace
        assert derived <= set(p.first), (p.name, derived - set(p.first))


def test_declared_first_characters_are_right_on_real_lines(data_dir: object) -> None:
    from pathlib import Path

    assert isinstance(data_dir, Path)
    for boot in iter_boots((data_dir / "debian-6.1-cloud-initcall-smp4.log").read_text().split("\n")):
        for line in boot:
            for p in PATTERNS:
                if p.regex.match(line.text):
                    assert line.text[0] in p.first, (p.name, line.text)


_CATEGORIES = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
}


def _class_chars(items: list[tuple[object, object]]) -> set[str] | None:
    """The ASCII characters a character class ([...], parsed) accepts."""
    negate = False
    tests: list[object] = []
    for kind, value in items:
        if str(kind) == "NEGATE":
            negate = True
        elif str(kind) == "LITERAL":
            tests.append(lambda c, v=value: ord(c) == v)
        elif str(kind) == "RANGE":
            tests.append(lambda c, v=value: v[0] <= ord(c) <= v[1])  # type: ignore[index]
        elif str(kind) == "CATEGORY" and str(value) in _CATEGORIES:
            tests.append(lambda c, v=_CATEGORIES[str(value)]: re.fullmatch(v, c) is not None)
        else:
            return None
    return {c for c in map(chr, range(128)) if any(t(c) for t in tests) != negate}  # type: ignore[operator]


# The plain lazy form of the same grammar (2.6.25's "()" after the offset, the pid that 2.6.25 and
# 2.6.26 did not print, and their "msecs"), which the possessive runs of patterns._FN_TOKEN replaced.
_LAZY_NAME = r"(\S+?)(?:\+0x[0-9a-f]+/0x[0-9a-f]+(?:\(\))?)?(?: \[([^\]\s]+)\])?"
_LAZY = re.compile(
    r"(?:calling  "
    + _LAZY_NAME
    + r"(?: @ (\d+))?(?!\S)|initcall "
    + _LAZY_NAME
    + r" returned (-?\d+) after (\d+) (?:usecs|(m)secs))"
)
_NAME_CHARS = st.sampled_from([*"ab_+x0[] /.-@", "0x1", "+0x0/0x10", " [mod]", " @ 7", "\t", "()"])


@settings(max_examples=400, deadline=None)
@given(
    st.lists(_NAME_CHARS, min_size=1, max_size=12), st.sampled_from(["calling  ", "initcall "]), st.booleans()
)
def test_initcall_scan_reads_names_as_the_lazy_pattern_did(
    parts: list[str], literal: str, tail: bool
) -> None:
    text = literal + "".join(parts)
    if tail:
        text += " @ 12" if literal.startswith("c") else " returned -19 after 77 usecs"
    elif not literal.startswith("c") and len(parts) % 2:
        text += " returned 0 after 149 msecs"
    old = _LAZY.match(text)
    new = INITCALL_SCAN.match(text)
    assert (old is None) == (new is None), text
    if old is not None and new is not None:
        call, name, module, pid, ret, usecs, millis = new.groups()
        if literal.startswith("c"):
            assert (name, module, pid) == old.groups()[:3] and call == "c"
        else:
            assert (name, module, ret, usecs, millis) == old.groups()[3:] and call is None
        assert new.end() == old.end()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 10**11 - 1), min_size=1, max_size=50))
def test_fixed_width_stamps_equal_float_of_their_text(micros: list[int]) -> None:
    lines = [f"[{m // 10**6:5d}.{m % 10**6:06d}] x" for m in micros]
    text = "\n".join(lines)
    codes = np.frombuffer(text.encode("ascii") + bytes(16), np.uint8)
    starts = np.array([0, *[i + 1 for i, c in enumerate(text) if c == "\n"]], dtype=np.int64)
    fixed, stamp_us = fixed_stamps(codes, starts)
    for line, is_fixed, us in zip(lines, fixed.tolist(), stamp_us.tolist(), strict=True):
        stamp = line[1 : line.index("]")]
        # five characters of seconds fit up to 99999 s; wider ones are the regex's
        assert is_fixed == (len(stamp) == 12)
        if is_fixed:
            assert us / 1e6 == float(stamp)


_PREFIXES = st.sampled_from(
    [
        "[{s:5d}.{u:06d}] ",
        "[{s:5d}.{u:06d}]",
        "[{s:5d}.{u:06d}][    T1] ",
        "[{s:5d}.{u:06d}][ C0] ",
        "<6>[{s:5d}.{u:06d}] ",
        "[{s:d}.{u:06d}] ",
        "[\t{s:4d}.{u:06d}] ",
        "[{s:6d}.{u:06d}] ",
        "[{s:5d}.{u:03d}] ",
        "[ 1 2.000000] ",
        "junk [{s:5d}.{u:06d}] ",
        "",
    ]
)
_TEXTS = st.sampled_from(
    [
        "calling  foo+0x0/0x10 @ 1",
        "initcall foo+0x0/0x10 returned 0 after 40 usecs",
        "initcall bar+0x0/0x10 [m] returned -5 after 7 usecs",
        "calling  bar+0x0/0x10 [m] @ 3",
        "calling  broken",
        "Linux version 6.1.0-x (y)",
        "smp: Bringing up secondary CPUs ...",
        "smp: Brought up 1 node, 2 CPUs",
        "Run /init as init process",
        ".... node  #0, CPUs:        #1",
        "  #2",
        "BOOTSCOPE-MARKER init uptime=3.28",
        "Memory: 100K/200K available",
        "other text",
        "caf\u00e9 \u0661",
    ]
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(_PREFIXES, st.integers(0, 3), st.integers(0, 999999), _TEXTS), min_size=1, max_size=40)
)
def test_every_prefix_form_gives_the_per_line_breakdown(items: list[tuple[str, int, int, str]]) -> None:
    lines = [prefix.format(s=s, u=u) + text for prefix, s, u, text in items]
    text = "\n".join(lines)
    try:
        slow = [analyze_boot(boot, top_n=3) for boot in iter_boots(text.split("\n"))]
    except ParseError as error:  # untimed logs: both paths must refuse them alike, with the same words
        with pytest.raises(ParseError) as fast_error:
            list(scan_boots([text], line_path_chars=0))
        assert str(fast_error.value) == str(error)
        return
    fast = [analyze_columns(c, top_n=3) for c in scan_boots([text], line_path_chars=0)]
    assert fast == slow


_FORMAT_LINES = (
    "[    0.000000] Linux version 6.1.0",
    "[    1.500000] host kernel: Freeing unused kernel memory",
    "[    1.600000] host systemd[1]: Started foo",
    "6,1,0,-;Linux version 6.1.0",
    "[0.000123 0.000001] Linux version 6.1.0",
    "[Mon Jul 10 14:44:20 2023] Linux version 6.1.0",
    "Jul 10 14:44:20 host kernel: Linux version 6.1.0",
    "Jul 10 14:44:21 host systemd[1]: Started foo",
    "U-Boot 2023.01",
    "console| [    0.1] x",
    "junk [    2.000000] smp: Brought up 1 node, 2 CPUs",
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_FORMAT_LINES), max_size=60))
def test_format_detection_stops_early_only_when_the_rest_cannot_change_it(sample: list[str]) -> None:
    from bootscope.parse.formats import CONSOLE_PREFIX, PARSERS, _line_format, stamped_format

    # the plain majority over every line of the sample, first format in PARSERS' order on a tie
    counts = dict.fromkeys(PARSERS, 0)
    for line in sample:
        found = None if line.startswith(CONSOLE_PREFIX) else _line_format(line)
        if found is not None:
            counts[found] += 1
    best = max(counts, key=lambda name: counts[name])
    assert stamped_format(sample) == (best if counts[best] else None)
    assert _line_format(_FORMAT_LINES[0]) == "dmesg" and _line_format(_FORMAT_LINES[1]) == "journal"


def _real_texts(data_dir: object) -> Iterator[tuple[str, str]]:
    """Yield (file name, text after the kernel stamp) for every line of every log in tests/data."""
    from pathlib import Path

    from bootscope.parse.formats import DMESG_ANYWHERE

    assert isinstance(data_dir, Path)
    stamp = re.compile(DMESG_ANYWHERE)
    for path in sorted(data_dir.rglob("*.log")):
        for raw in path.read_text(errors="replace").split("\n"):
            m = stamp.search(raw)
            yield path.name, raw[m.end() :] if m else raw


def test_declared_first_two_characters_are_right_on_every_real_line(data_dir: object) -> None:
    from bootscope.parse.block_probes import MAY_START_KNOWN, char_codes

    checked = 0
    for name, text in _real_texts(data_dir):
        for p in PATTERNS:
            if p.name.startswith("initcall_") or not p.regex.match(text):
                continue
            codes = char_codes(text[:2] + "\n")
            first, second = (min(int(c), 128) for c in codes[:2])
            assert MAY_START_KNOWN[first, second], (p.name, name, text[:40])
            checked += 1
    assert checked > 200


@given(
    st.lists(
        st.sampled_from(
            [
                "[    1.000000] a",
                "junk [    2.000000] b",
                "x[ 3.000000] c",
                "é€ [    4.000000] d",
                "[5",
                "",
                "   [    5.000000] after blanks",
                "systemd[1]: x [ 6.000000] y [    7.000000] z",
                "a[12345.000001] b",
            ]
        ),
        max_size=30,
    )
)
def test_split_embedded_cuts_lines_as_the_line_parser_splits_them(lines: list[str]) -> None:
    from bootscope.parse.block_probes import char_codes, split_embedded
    from bootscope.parse.formats import parse_dmesg

    text = "\n".join(lines)
    codes, starts, ends = split_embedded(text)
    assert np.array_equal(codes, char_codes(text))
    pieces = [text[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
    assert all("\n" not in piece for piece in pieces)
    # each piece is one line of the per-line parser, in order
    by_piece = [line for piece in pieces for line in parse_dmesg((piece,), lambda _m: None)]
    assert len(by_piece) == len(pieces)
    assert by_piece == list(parse_dmesg(text.split("\n"), lambda _m: None))


def _kept_as_candidate(text: str) -> bool:
    """Whether the block scan's filters (first two characters, pinned literals, indentation) let
    a line with this text reach the pattern table's regex."""
    from bootscope.parse.block_probes import MAY_START_KNOWN, after_indent_ok, char_codes, pinned_ok

    codes = char_codes(text + "\n")
    padded = np.concatenate((codes, np.zeros(64, np.uint8)))
    at = np.zeros(1, np.int64)
    first = np.minimum(padded[at], 128)
    if not MAY_START_KNOWN[first[0], min(int(padded[1]), 128)]:
        return False
    import bootscope.parse.block_probes as block_probes

    kept = []
    for scanner in (block_probes.scanner, None):  # the C probe and numpy's must agree
        saved, block_probes.scanner = block_probes.scanner, scanner
        try:
            kept.append(len(pinned_ok(padded, at, np.zeros(1, np.int64), first)) == 1)
        finally:
            block_probes.scanner = saved
    assert kept[0] == kept[1], text
    return kept[0] and bool(after_indent_ok(padded, at, first)[0])


@pytest.mark.parametrize("name", [p.name for p in PATTERNS if not p.name.startswith("initcall_")])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_match_of_the_table_passes_the_candidate_filters(name: str, data: st.DataObject) -> None:
    # hypothesis writes lines that the entry's own regex matches: the filters may never drop one
    regex = next(p.regex for p in PATTERNS if p.name == name)
    text = data.draw(st.from_regex(regex, fullmatch=True).filter(lambda s: "\n" not in s))
    assert _kept_as_candidate(text), (name, text)


def test_declared_prefixes_are_right_on_every_real_line(data_dir: object) -> None:
    checked = 0
    for name, text in _real_texts(data_dir):
        if any(not p.name.startswith("initcall_") and p.regex.match(text) for p in PATTERNS):
            assert _kept_as_candidate(text), (name, text[:60])
            checked += 1
    assert checked > 200
    assert not _kept_as_candidate("systemd[1]: Started Journal Service.")
    assert not _kept_as_candidate("  node   0: [mem 0x0000000000001000-0x000000000009efff]")
    assert _kept_as_candidate("   #2 #3")

"""numpy's reading of initcall_debug lines (bootscope/parse/initcall_rows.py) against INITCALL_SCAN."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bootscope.parse.initcall_rows as initcall_rows
from bootscope.parse import iter_boots, scan_boots
from bootscope.parse.block_probes import char_codes
from bootscope.parse.columns import columns_from_lines
from bootscope.parse.initcall_rows import PAD_CHARS, TextSpans, read_initcalls
from bootscope.parse.patterns import INITCALL_SCAN


def _read(lines: list[str], native: bool = True) -> list[tuple[bool, str, str, str, str, int, bool] | None]:
    """Read every line (each starts with its text) with the C scanner (``native``) or numpy; None
    where no row was kept."""
    text = "\n".join(lines)
    codes = char_codes(text)
    padded = np.concatenate((codes, np.zeros(PAD_CHARS, codes.dtype)))
    starts = np.array([0, *[i + 1 for i, c in enumerate(text) if c == "\n"]], dtype=np.int64)
    ends = np.array([*(starts[1:] - 1).tolist(), len(text)], dtype=np.int64)
    indices = np.arange(len(lines), dtype=np.int64)
    fields, keep = read_initcalls(text, padded, indices, starts, ends, native=native)
    columns = fields.columns(keep, np.zeros(len(keep)))
    found: list[tuple[bool, str, str, str, str, int, bool] | None] = [None] * len(lines)
    done = 0
    for row, line in enumerate(keep.tolist()):
        call = bool(columns.is_call[row])
        usecs = 0 if call else columns.durations_us[done]
        done += not call
        found[line] = (
            call,
            columns.names[row],
            columns.modules[row],
            columns.pids[row],
            columns.rets[row],
            usecs,
            bool(columns.failing[row]),
        )
    # equal ids exactly for equal names
    names = [columns.names[i] for i in range(len(keep))]
    ids = columns.name_ids.tolist()
    assert all((names[i] == names[j]) == (ids[i] == ids[j]) for i in range(len(ids)) for j in range(len(ids)))
    return found


def _expected(line: str) -> tuple[bool, str, str, str, str, int, bool] | None:
    m = INITCALL_SCAN.match(line)
    if m is None or not m.group(2):
        return None
    call, name, module, pid, ret, usecs, millis = m.groups()
    return (
        call is not None,
        name,
        module or "",
        pid or "",
        ret or "",
        int(usecs) * (1000 if millis else 1) if call is None else 0,
        call is None and int(ret) != 0,
    )


_PIECES = st.sampled_from(
    [
        *"ab_.-+/x0[]@",
        "foo",
        "+0x0/0x1ab",
        "+0x10/0x20",
        "+0xG/0x1",
        "+0x/0x1",
        "+0x1/0x",
        "+0x1/0x2+",
        "()",
        "+0x0/0x1b()",
        " [mod]",
        "\t",
        "\x1c",
        "\u00a0",
        "\u0661",
        "\u00e9",
    ]
)
_TAILS = st.sampled_from(
    [
        " @ 1",
        " @ 12345",
        " @ 12abc",
        " @ 1\u0661",
        " @ ",
        " @  1",
        " @ 1234567890123456789012",
        " returned 0 after 5 usecs",
        " returned -19 after 77 usecs",
        " returned -0 after 3 usecs",
        " returned 00 after 3 usecs",
        " returned 1 after 123456789012345678901 usecs",
        " returned 0 after 5 usecs and more",
        " returned 0 after 5 usec",
        " returned 0 after  5 usecs",
        " returned x after 5 usecs",
        " returned 0 after 5",
        " returned 0 after 149 msecs",
        " returned -5 after 0 msecs",
        " returned 0 after 5 msec",
        " @ 1 x",
        " x",
        "",
    ]
)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["calling  ", "initcall ", "calling ", "initcal "]),
            st.lists(_PIECES, max_size=8),
            _TAILS,
        ),
        min_size=1,
        max_size=12,
    )
)
def test_c_and_numpy_read_every_line_as_the_regex_does(items: list[tuple[str, list[str], str]]) -> None:
    lines = [literal + "".join(pieces) + tail for literal, pieces, tail in items]
    expected = [_expected(line) for line in lines]
    assert _read(lines, native=True) == expected
    assert _read(lines, native=False) == expected


def test_the_last_line_of_a_block_is_read_without_a_line_end() -> None:
    lines = [
        "calling  a+0x0/0x1 @ 1",
        "initcall a+0x0/0x1 returned 0 after 5 usecs",
        "initcall b returned -5 after 9 usecs",
    ]
    for native in (True, False):
        assert _read(lines, native) == [_expected(line) for line in lines]
        assert _read(lines, native)[2] == (False, "b", "", "", "-5", 9, True)


def test_lines_shorter_than_the_literal_are_no_initcalls() -> None:
    lines = ["calling ", "initcall", "calling  ", "initcall x", "c"]
    assert _read(lines, True) == _read(lines, False) == [None] * len(lines)


def test_text_spans_index_and_slice_like_a_list() -> None:
    text = "alpha beta gamma"
    spans = TextSpans(text, np.array([0, 6, 11]), np.array([5, 10, 16]))
    assert list(spans) == ["alpha", "beta", "gamma"]
    assert spans[1] == "beta" and spans[-1] == "gamma"
    assert list(spans[1:]) == ["beta", "gamma"] and len(spans[:1]) == 1


class _NoRegex:
    def match(self, *args: object) -> None:
        raise AssertionError(f"a real initcall line fell back to the regex: {args[1:]}")


def test_real_initcall_lines_need_no_regex(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (data_dir / "debian-6.1-cloud-initcall-smp4.log").read_text().replace("\r\n", "\n").rstrip("\n")
    expected = sum(len(columns_from_lines(boot).initcalls) for boot in iter_boots(text.split("\n")))
    monkeypatch.setattr(initcall_rows, "INITCALL_SCAN", _NoRegex())
    boots = list(scan_boots([text], line_path_chars=0))
    assert sum(len(boot.initcalls) for boot in boots) == expected > 1000

"""A block's line ends measured with bytes methods (small blocks) and with numpy (big ones): the same."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bootscope.sources.files import _line_ends_numpy, _line_ends_plain


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=300).map(lambda b: b.replace(b"a", b"\r").replace(b"b", b"\n")))
def test_line_ends_plain_and_numpy_agree(data: bytes) -> None:
    plain = _line_ends_plain(data)
    assert plain == _line_ends_numpy(data)
    cleaned, newlines, longest = plain
    assert cleaned == data.replace(b"\r\n", b"\n") and newlines == cleaned.count(b"\n")
    assert longest == max(len(line) for line in cleaned.split(b"\n"))


def test_a_console_capture_loses_every_line_ending_cr() -> None:
    data = b"[    0.000000] Linux version\r\n\r\n[    1.000000] x\r\nno end"
    assert _line_ends_plain(data) == _line_ends_numpy(data) == (data.replace(b"\r", b""), 3, 28)

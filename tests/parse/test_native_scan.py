"""The block scan's C part (bootscope/parse/_scan.c) against the numpy code it stands in for."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bootscope.parse.block_probes as block_probes
import bootscope.parse.initcall_rows as initcall_rows
from bootscope.analyze.breakdown import analyze_columns
from bootscope.errors import BootscopeError
from bootscope.parse import scan_boots
from bootscope.parse.native import scanner
from bootscope.report.json_out import breakdown_to_dict


def test_the_c_scanner_is_built() -> None:
    # setup.py builds it as an optional extension: a missing compiler must fail the suite here,
    # not leave every other test running the numpy code unnoticed
    assert scanner is not None, "bootscope/parse/_scan.c was not built: install gcc and python3-dev"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_codes_are_latin1_or_0x80_as_the_codec_path_gives(text: str) -> None:
    assert scanner is not None
    expected = text.encode("latin-1", errors=block_probes.NOT_LATIN1)
    assert scanner.codes(text) == expected


_STAMP_PIECES = st.sampled_from(["[", "]", " ", ".", "0", "1", "9", "x", "[[", "\u00e9", "12345", "123456"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(_STAMP_PIECES, max_size=12).map("".join), min_size=1, max_size=10))
def test_fixed_stamps_as_numpy_reads_them(lines: list[str]) -> None:
    assert scanner is not None
    lines = [*lines, "[    1.000001] a", "[12345.123456]", "[ 1.000000] short"]
    text = "\n".join(lines)
    codes = block_probes.char_codes(text)
    padded = np.concatenate((codes, np.zeros(initcall_rows.PAD_CHARS, np.uint8)))
    starts = np.array([0, *[i + 1 for i, c in enumerate(text) if c == "\n"]], dtype=np.int64)
    want_fixed, want_us = block_probes.numpy_fixed_stamps(padded, starts)
    fixed, stamp_us = block_probes.fixed_stamps(padded, starts)
    assert fixed.tolist() == want_fixed.tolist()
    assert stamp_us.tolist() == want_us.tolist()
    assert fixed[-3] and stamp_us[-3] == 1_000_001 and stamp_us[-2] == 12345_123456


def test_c_functions_reject_bad_arguments_with_python_errors() -> None:
    assert scanner is not None
    with pytest.raises(TypeError):
        scanner.codes(b"bytes")
    with pytest.raises(ValueError):
        scanner.initcall_rows(
            b"calling", np.zeros(2, np.int64), np.zeros(3, np.int64), np.zeros((9, 2), np.int64)
        )
    with pytest.raises(TypeError):
        scanner.fixed_stamps(b"[", np.zeros(1, np.int32), np.zeros(1, np.uint8), np.zeros(1, np.int64))
    with pytest.raises(TypeError):
        scanner.starts_with(b"abc", np.zeros(1, np.int64), ("a",), np.zeros(1, np.uint8))


def _documents(path: Path) -> list[dict[str, object]] | str:
    text = path.read_text(errors="replace").replace("\r\n", "\n").rstrip("\n")
    try:
        return [
            breakdown_to_dict(analyze_columns(boot, top_n=10))
            for boot in scan_boots([text], line_path_chars=0)
        ]
    except BootscopeError as error:
        return str(error)


def test_the_numpy_code_gives_the_same_boots_on_every_real_log(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = [path for path in sorted([*data_dir.glob("*.log"), *(data_dir / "hw").glob("*.log")])]
    with_c = {path.name: _documents(path) for path in logs}
    monkeypatch.setattr(block_probes, "scanner", None)
    monkeypatch.setattr(initcall_rows, "scanner", None)
    without_c = {path.name: _documents(path) for path in logs}
    assert json.dumps(with_c, sort_keys=True, default=str) == json.dumps(
        without_c, sort_keys=True, default=str
    )
    assert sum(len(boots) for boots in with_c.values() if isinstance(boots, list)) > 20

"""bootscope.sources.files: compressed input, stdin, bad files, undecodable bytes, huge lines."""

from __future__ import annotations

import gzip
import lzma
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard

from bootscope.errors import InputError
from bootscope.sources.files import read_text_lines

LOG = "debian-6.1-cloud-smp2.log"


def _expected(data_dir: Path) -> list[str]:
    return [line.rstrip("\r") for line in (data_dir / LOG).read_bytes().decode().splitlines()]


@pytest.mark.parametrize(
    ("suffix", "compress"),
    [(".gz", gzip.compress), (".xz", lzma.compress), (".zst", zstandard.ZstdCompressor().compress)],
)
def test_compressed_logs_read_like_the_plain_file(
    data_dir: Path, tmp_path: Path, suffix: str, compress
) -> None:  # type: ignore[no-untyped-def]
    packed = tmp_path / f"log{suffix}"
    packed.write_bytes(compress((data_dir / LOG).read_bytes()))
    assert list(read_text_lines(str(packed))) == _expected(data_dir)


def test_plain_file_lines_have_no_line_ends(data_dir: Path) -> None:
    lines = list(read_text_lines(str(data_dir / LOG)))
    assert lines == _expected(data_dir)
    assert not any(line.endswith("\r") for line in lines)


def test_stdin_is_read_with_dash(data_dir: Path) -> None:
    code = "from bootscope.sources.files import read_text_lines; print(sum(1 for _ in read_text_lines('-')))"
    done = subprocess.run(
        [sys.executable, "-c", code], input=(data_dir / LOG).read_bytes(), capture_output=True, check=True
    )
    assert int(done.stdout) == len(_expected(data_dir))


@pytest.mark.parametrize("kind", ["missing", "directory", "empty"])
def test_bad_paths_give_one_line_input_errors(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "x.log"
    if kind == "directory":
        path.mkdir()
    elif kind == "empty":
        path.write_bytes(b"")
    with pytest.raises(InputError) as raised:
        list(read_text_lines(str(path)))
    assert "\n" not in str(raised.value)
    assert str(path) in str(raised.value)


def test_empty_compressed_file_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.gz"
    path.write_bytes(gzip.compress(b""))
    with pytest.raises(InputError, match="empty"):
        list(read_text_lines(str(path)))


def test_corrupt_gzip_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.gz"
    path.write_bytes(gzip.compress(b"[    0.000000] x\n" * 1000)[:60])
    with pytest.raises(InputError, match="corrupt"):
        list(read_text_lines(str(path)))


def test_undecodable_bytes_are_replaced_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "bad.log"
    path.write_bytes(b"[    1.000000] ok\n[    2.000000] bad \xff\xfe here\n\xc3\n")
    source = read_text_lines(str(path))
    lines = list(source)
    assert lines == ["[    1.000000] ok", "[    2.000000] bad \ufffd\ufffd here", "\ufffd"]
    assert source.undecodable_bytes == 3
    assert any("3 byte(s)" in warning for warning in source.warnings)


def test_huge_line_is_cut_and_the_next_line_survives(tmp_path: Path) -> None:
    path = tmp_path / "huge.log"
    path.write_bytes(b"[    1.000000] a\n" + b"x" * (10 * 1024 * 1024) + b"\n[    2.000000] b\n")
    source = read_text_lines(str(path), max_line_bytes=4096)
    lines = list(source)
    assert lines[0] == "[    1.000000] a"
    assert lines[1] == "x" * 4096
    assert lines[2] == "[    2.000000] b"
    assert source.cut_lines == 1

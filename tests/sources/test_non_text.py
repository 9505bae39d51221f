"""What is not a text log is refused at once (one line, exit 2, a hint); a log with a few junk bytes
is still read. Timings are not asserted here: the refusal happens before any parsing, on the first
64 KiB, which the tests show by the error's wording."""

from __future__ import annotations

import gzip
import json
import random
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from bootscope.errors import InputError
from bootscope.sources.files import non_text_share, read_text_lines

LOG = "debian-6.1-cloud-smp2.log"


def _analyze(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "bootscope", "analyze", *args], input=stdin, capture_output=True, timeout=120
    )


def _random_bytes(count: int) -> bytes:
    return random.Random(26).randbytes(count)


def test_random_bytes_are_refused_as_binary_with_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "junk.bin"
    path.write_bytes(_random_bytes(3_000_000))
    done = _analyze(str(path))
    assert done.returncode == 2
    error = done.stderr.decode()
    assert error.count("\n") == 1 and "Traceback" not in error
    # about half of random bytes are not UTF-8 or are control bytes: the share is said
    share = re.search(r"looks binary \((\d+) % non-text bytes in the first 64 KiB\)", error)
    assert share is not None and 40 <= int(share.group(1)) <= 70
    assert "--run N --db FILE" in error


def test_binary_is_refused_after_decompression_and_on_stdin(tmp_path: Path) -> None:
    packed = tmp_path / "junk.gz"
    packed.write_bytes(gzip.compress(_random_bytes(200_000)))
    assert _analyze(str(packed)).returncode == 2
    piped = _analyze("-", stdin=_random_bytes(200_000))
    assert piped.returncode == 2 and b"-: looks binary" in piped.stderr


def test_a_bootscope_database_is_named_and_the_option_suggested(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    with sqlite3.connect(path) as db:
        db.execute("create table t (x)")
    done = _analyze(str(path))
    assert done.returncode == 2
    assert done.stderr.decode().strip() == (
        f"bootscope: error: {path}: is a SQLite database, not a log; did you mean --run N --db {path}?"
    )


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>dmesg - Pastebin</title></head>
<body><pre>[    0.000000] Linux version 6.1.0-13-cloud-amd64</pre>
<div>  1.2s foo.service</div>
</body></html>
"""


@pytest.mark.parametrize(
    "page", [PAGE, "\ufeff\n  " + PAGE.lower(), '<?xml version="1.0"?>\n<svg>\n</svg>\n']
)
def test_html_and_xml_pages_are_refused(tmp_path: Path, page: str) -> None:
    path = tmp_path / "saved.html"
    path.write_text(page, encoding="utf-8")
    done = _analyze(str(path))
    assert done.returncode == 2, done.stdout
    assert b"looks like an HTML or XML page, not a log" in done.stderr
    assert done.stdout == b""


def test_utf16_text_gets_the_conversion_hint(tmp_path: Path) -> None:
    path = tmp_path / "windows.log"
    path.write_bytes("[    0.000000] Linux version 6.1.0\n".encode("utf-16"))
    with pytest.raises(InputError, match=r"UTF-16.*iconv"):
        list(read_text_lines(str(path)))


def test_a_log_with_a_few_junk_bytes_still_analyzes(data_dir: Path, tmp_path: Path) -> None:
    # line noise on a serial line: a burst of NULs and 0xff before the first line, stray bytes in three
    # lines; the kernel's "Run /init" stamp is read off the file by hand, not by bootscope
    lines = (data_dir / LOG).read_bytes().split(b"\n")
    for number in (5, 50, 200):
        lines[number] = lines[number] + b"\xff\xfe\x00\x07"
    noisy = b"\x00" * 40 + b"\xff" * 8 + b"\n".join(lines)
    path = tmp_path / "noisy.log"
    path.write_bytes(noisy)
    init = re.search(rb"\[\s*(\d+\.\d+)\] Run /init as init process", noisy)
    assert init is not None
    done = _analyze(str(path), "--format", "json")
    assert done.returncode == 0, done.stderr
    (boot,) = json.loads(done.stdout)["boots"]
    assert boot["metrics"]["kernel_init_s"] == float(init.group(1))
    source = read_text_lines(str(path))
    list(source)
    assert source.undecodable_bytes == 8 + 3 * 2  # 0xff and 0xfe are never UTF-8; NUL and BEL are


def test_the_non_text_share_counts_controls_and_undecodable_bytes() -> None:
    assert non_text_share(b"") == 0.0
    assert non_text_share(b"plain text\twith\r\n\x1b[0m colour\x0c") == 0.0
    assert non_text_share(b"ab\x00\xff") == pytest.approx(0.5)
    # a multi-byte character cut by the end of the sample is not junk
    assert non_text_share("aé".encode()[:2]) == 0.0
    assert non_text_share("€".encode() * 10 + "€".encode()[:2]) == 0.0


def test_a_short_file_is_not_judged(tmp_path: Path) -> None:
    path = tmp_path / "tiny.log"
    path.write_bytes(b"\xff\xfe\xfd junk\n")  # starts like a UTF-16 mark: still a UTF-16 refusal
    with pytest.raises(InputError, match="UTF-16"):
        list(read_text_lines(str(path)))
    path.write_bytes(b"junk \xff\x00\x01 " * 20)
    assert len(list(read_text_lines(str(path)))) == 1


def test_a_log_quoting_markup_after_its_first_line_is_still_a_log(data_dir: Path, tmp_path: Path) -> None:
    lines = (data_dir / LOG).read_text().splitlines()
    lines.insert(3, "<html><body>a health check's page on the console</body></html>")
    path = tmp_path / "quoted.log"
    path.write_text("\n".join(lines) + "\n")
    assert list(read_text_lines(str(path)))[3].startswith("<html>")

"""Random bytes and random mixes of real lines never raise anything but the documented errors."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bootscope.analyze import analyze_boot
from bootscope.errors import ParseError
from bootscope.parse import parse_log

DATA = Path(__file__).resolve().parents[1] / "data"
REAL = [
    line
    for name in (
        "debian-6.1-cloud-initcall-smp4.log",
        "debian-6.1-cloud-smp2-kmsg.log",
        "debian-6.1-cloud-smp2-journal.json",
    )
    for line in (DATA / name).read_text(errors="replace").splitlines()[:400]
]


def _check(lines: list[str], fmt: str = "auto") -> None:
    try:
        parsed = parse_log(lines, fmt)
    except ParseError:
        return
    for boot in parsed.boots:
        b = analyze_boot(boot, top_n=3)
        assert len(b.gaps) <= 3
        assert all(g.duration_s > 0 for g in b.gaps)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=2000))
def test_random_bytes(data: bytes) -> None:
    _check(data.decode("utf-8", errors="replace").split("\n"))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(REAL), max_size=80),
    st.sampled_from(["auto", "dmesg", "kmsg", "journal", "journal-json", "grabserial"]),
)
def test_random_mixes_of_real_lines(lines: list[str], fmt: str) -> None:
    _check(lines, fmt)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 1e6, allow_nan=False), st.text(max_size=40)), max_size=50))
def test_random_stamps(stamped: list[tuple[float, str]]) -> None:
    _check([f"[{t:12.6f}] {text}" for t, text in stamped])

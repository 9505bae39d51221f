"""The block scan (bootscope.parse.chunked) against the per-line path: same boots, same Breakdowns."""

from __future__ import annotations

import heapq
import random
from pathlib import Path

import numpy as np
import pytest
from columns_arrays import as_arrays
from hypothesis import given, settings
from hypothesis import strategies as st

from bootscope.analyze.breakdown import analyze_boot, analyze_columns
from bootscope.analyze.gaps import top_gaps
from bootscope.errors import ParseError
from bootscope.model import LogLine
from bootscope.parse import SMALL_LOG_CHARS, BlockBoots, LineBoots, iter_boots, scan_boots
from bootscope.parse.columns import columns_from_lines
from bootscope.parse.patterns import COMBINED, INITCALL_LITERALS, PATTERNS
from bootscope.report.json_out import breakdown_to_dict
from bootscope.sources.files import read_text_lines

DATA = Path(__file__).parents[1] / "data"
LOGS = sorted(p.name for p in DATA.iterdir() if p.suffix in (".log", ".json"))


def _blocks(text: str, size: int) -> list[str]:
    """Cut ``text`` (whole lines) into blocks of about ``size`` characters, at line ends."""
    lines = text.split("\n")
    blocks: list[str] = []
    current: list[str] = []
    length = 0
    for line in lines:
        current.append(line)
        length += len(line) + 1
        if length >= size:
            blocks.append("\n".join(current))
            current, length = [], 0
    if current:
        blocks.append("\n".join(current))
    return blocks


def _compare(text: str, size: int) -> int:
    """Assert both paths agree on ``text``; return the number of boots."""
    slow_stream = iter_boots(text.split("\n"))
    slow = [analyze_boot(boot, top_n=5) for boot in slow_stream]
    fast_stream = scan_boots(_blocks(text, size), line_path_chars=0)
    fast = [analyze_columns(columns, top_n=5) for columns in fast_stream]
    assert fast == slow
    assert [breakdown_to_dict(b) for b in fast] == [breakdown_to_dict(b) for b in slow]
    assert fast_stream.warnings == slow_stream.warnings
    assert fast_stream.boot_count == slow_stream.boot_count == len(slow)
    return len(slow)


@pytest.mark.parametrize("name", LOGS)
@pytest.mark.parametrize("block_bytes", [1 << 20, 4096])
def test_block_scan_gives_the_per_line_breakdowns_on_every_real_log(name: str, block_bytes: int) -> None:
    path = str(DATA / name)
    slow_stream = iter_boots(read_text_lines(path))
    slow = [analyze_boot(boot) for boot in slow_stream]
    fast_stream = scan_boots(read_text_lines(path).blocks(block_bytes), line_path_chars=0)
    fast = [analyze_columns(columns) for columns in fast_stream]
    assert slow and fast == slow
    assert fast_stream.format == slow_stream.format
    assert fast_stream.warnings == slow_stream.warnings
    # without the full initcall list nothing else changes, and the JSON does not hold that list
    lean = [
        analyze_columns(c, all_initcalls=False)
        for c in scan_boots(read_text_lines(path).blocks(), line_path_chars=0)
    ]
    assert [breakdown_to_dict(b) for b in lean] == [breakdown_to_dict(b) for b in slow]


def test_big_dmesg_logs_take_the_block_scan_small_ones_the_line_path(data_dir: Path) -> None:
    path = data_dir / "debian-6.1-cloud-initcall-smp4.log"  # 100 kB
    assert isinstance(scan_boots(read_text_lines(str(path)).blocks()), LineBoots)
    assert isinstance(scan_boots(read_text_lines(str(path)).blocks(), line_path_chars=0), BlockBoots)
    text = path.read_text()
    big = [text] * (SMALL_LOG_CHARS // len(text) + 1)  # one boot a block, just over the limit
    assert isinstance(scan_boots(big), BlockBoots)
    assert isinstance(scan_boots(big[:-1]), LineBoots)
    same = [analyze_columns(c) for c in scan_boots(big[:-1], line_path_chars=0)]
    assert [analyze_columns(c) for c in scan_boots(big[:-1])] == same and len(same) == len(big) - 1
    kmsg = read_text_lines(str(data_dir / "debian-6.1-cloud-smp2-kmsg.log"))
    assert scan_boots(kmsg.blocks(), line_path_chars=0).format == "kmsg"


def test_hostile_lines_split_and_parse_as_line_by_line(data_dir: Path) -> None:
    smp2 = (data_dir / "debian-6.1-cloud-smp2.log").read_text().replace("\r", "").rstrip("\n").split("\n")
    smp4 = (data_dir / "debian-6.1-cloud-initcall-smp4.log").read_text().rstrip("\n").split("\n")
    junk = [
        "",
        "\x00\x01binary \ufffd junk [",
        "SeaBIOS [    1.000000] Linux version 6.1.0-junk (embedded banner)",
        "   [    2.500000] calling  after_spaces+0x0/0x10 @ 1",
        "[    0.000000] pci 0000:00:00.0: calling  quirk_mmio_always_on+0x0/0x20 @ 1",
        "[    9.999999] initcall never_started+0x0/0x10 returned -19 after 77 usecs",
        "[    0.500000] calling  twice+0x0/0x10 @ 1",
        "[    0.600000] calling  twice+0x0/0x10 @ 2",
        "<html><script>alert(1)</script></html>",
        "[    0.000000]  #2",
        "[ 1.5] node  #0, CPUs:  #1",
        "initcall untimed+0x0/0x1 returned 0 after 5 usecs",
        "x" * 5000,
    ]
    rng = random.Random(7)
    lines = smp2 + smp4 + smp2
    for item in junk * 3:
        lines.insert(rng.randrange(len(lines)), item)
    text = "\n".join(lines)
    assert _compare(text, 1 << 20) == _compare(text, 3000) >= 3


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(
                [
                    "[    0.000000] Linux version 6.1.0 (x)",
                    "[    0.000000] Command line: console=ttyS0",
                    "[    1.200000] smp: Bringing up secondary CPUs ...",
                    "[    1.300000] smp: Brought up 1 node, 2 CPUs",
                    "[    2.000000] Run /init as init process",
                    "[    0.100000] calling  foo+0x0/0x1 @ 1",
                    "[    0.200000] initcall foo+0x0/0x1 returned 0 after 100 usecs",
                    "BOOTSCOPE-MARKER init uptime=3.28",
                    "junk [    3.000000] calling  bar+0x0/0x1 [mod] @ 2",
                ]
            ),
            st.builds(lambda t, s: f"[{t:12.6f}] {s}", st.floats(0, 5), st.text(max_size=20)),
            st.text(max_size=30),
        ),
        min_size=1,
        max_size=60,
    ),
    st.integers(10, 400),
)
def test_random_logs_agree(lines: list[str], block_chars: int) -> None:
    text = "\n".join(line.replace("\n", " ").replace("\r", " ") for line in lines)
    try:
        slow_count = _compare(text, block_chars)
    except ParseError:
        with pytest.raises(ParseError):
            list(scan_boots(_blocks(text, block_chars), line_path_chars=0))
        return
    assert slow_count >= 1


def test_no_earlier_pattern_takes_an_initcall_line(data_dir: Path) -> None:
    # The block scan reads a line that starts with an initcall literal as an initcall line; the
    # table must agree: no pattern before the initcall ones matches such a text.
    texts = [
        line.text
        for boot in iter_boots(read_text_lines(str(data_dir / "debian-6.1-cloud-initcall-smp4.log")))
        for line in boot
        if line.text.startswith(INITCALL_LITERALS)
    ]
    assert len(texts) > 1000
    first_initcall = [p.name for p in PATTERNS].index("initcall_start")
    earlier = list(PATTERNS[:first_initcall])
    assert earlier and not any(p.name.startswith("initcall") for p in earlier)
    for text in texts:
        assert all(p.regex.match(text) is None for p in earlier)
        m = COMBINED.match(text)
        assert m is None or (m.lastgroup or "").startswith("initcall")


def _heap_gaps(times: list[float], top_n: int) -> list[tuple[float, int, int]]:
    """The per-line algorithm, written out independently: a bounded min-heap fed in log order."""
    heap: list[tuple[float, int, int]] = []
    high, high_index = float("-inf"), -1
    for index, t in enumerate(times):
        if t <= high:
            continue
        if high_index >= 0:
            item = (t - high, high_index, index)
            if len(heap) < top_n:
                heapq.heappush(heap, item)
            elif item[0] > heap[0][0]:
                heapq.heapreplace(heap, item)
        high, high_index = t, index
    return sorted(heap, key=lambda item: (-item[0], item[1]))


@pytest.mark.parametrize("arrays", [False, True])
@pytest.mark.parametrize("seed", range(20))
def test_top_gaps_picks_equal_gaps_as_the_heap_does(seed: int, arrays: bool) -> None:
    rng = random.Random(seed)
    # integer steps make many equal gaps, and steps back make lines that raise nothing
    times = [0.0]
    for _ in range(rng.randrange(2, 80)):
        times.append(times[-1] + rng.choice([0.0, 1.0, 1.0, 2.0, 3.0, -2.0]))
    lines = [LogLine(f"line {i}", t) for i, t in enumerate(times)]
    top_n = rng.randrange(1, 6)
    columns = columns_from_lines(lines)  # lists: the plain walk; as arrays: the numpy form
    gaps, high = top_gaps(as_arrays(columns) if arrays else columns, top_n)
    expected = _heap_gaps(times, top_n)
    assert [(g.duration_s, g.before, g.after) for g in gaps] == [
        (d, f"line {b}", f"line {a}") for d, b, a in expected
    ]
    assert high == max(times)
    assert np.isclose(sum(g.duration_s for g in gaps), sum(d for d, _, _ in expected))

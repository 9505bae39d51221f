"""Parsers of cyclictest, oslat and rtla output, on real output made here (tests/data/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bootscope.errors import InputError
from bootscope.parse.latency import clean_line, parse_latency_text

DATA = Path(__file__).parent.parent / "data" / "latency"


def _run(name: str):  # type: ignore[no-untyped-def]
    return parse_latency_text((DATA / name).read_text(), name)


def test_cyclictest_histogram_matches_its_own_footers() -> None:
    run = _run("cyclictest-h200-q.txt")
    assert run.tool == "cyclictest"
    t0, t1 = run.series
    # The footer: "# Total: 000009911 000009980", "# Histogram Overflows: 00035 00006".
    assert (int(t0.counts.sum()), t0.overflow, t0.limit_us) == (9911, 35, 200)
    assert (int(t1.counts.sum()), t1.overflow) == (9980, 6)
    assert (t0.min_us, t0.avg_us, t0.max_us) == (5.0, 11.0, 1068.0)
    assert len(t0.overflow_cycles) == 35 and t0.overflow_cycles[:2] == (563, 922)
    assert run.warnings == ()


def test_cyclictest_histofall_sum_column_is_not_a_thread() -> None:
    run = _run("cyclictest-H30-q.txt")
    assert [s.name for s in run.series] == ["T0", "T1"]
    assert [s.overflow for s in run.series] == [280, 40]
    assert len(run.series[0].overflow_cycles) == 30  # "# 00250 others" is not a cycle number


def test_json_overflow_is_cycles_minus_histogram() -> None:
    run = _run("cyclictest-h100.json")
    raw = json.loads((DATA / "cyclictest-h100.json").read_text())["thread"]["0"]
    t0 = run.series[0]
    assert t0.limit_us == 100 and t0.cycles == raw["cycles"]
    assert t0.overflow == raw["cycles"] - sum(raw["histogram"].values()) == 23
    # The same run's text footer says 23 overflows for thread 0.
    assert _run("cyclictest-h100-json-run.txt").series[0].overflow == 23
    assert t0.cpu == 0 and t0.avg_us == pytest.approx(8.88)


def test_json_without_histogram_warns() -> None:
    run = _run("cyclictest-D2.json")
    assert all(s.counts is None for s in run.series)
    assert "no histogram" in run.warnings[0]


def test_summary_lines_quiet_and_live_with_escapes() -> None:
    quiet = _run("cyclictest-q.txt")
    assert [(s.cycles, s.max_us, s.interval_us, s.priority) for s in quiet.series] == [
        (9990, 811.0, 200, 95),
        (2841, 2537.0, 700, 95),
    ]
    live = _run("cyclictest-live-escapes.txt")  # cursor-up escapes; the last T: line wins
    assert [s.cycles for s in live.series] == [4967, 1416]


def test_oslat_last_bucket_is_the_overflow() -> None:
    run = _run("oslat-D2.txt")
    cpu0, cpu1 = run.series
    assert (cpu0.cpu, cpu0.limit_us, cpu0.overflow, cpu0.max_us) == (0, 32, 258, 12898.0)
    assert int(cpu0.counts[1]) == 39332736 and cpu1.overflow == 206


def test_rtla_columns_add_up_to_count() -> None:
    run = _run("rtla-timerlat-hist-kernel-doc.txt")
    assert run.tool == "timerlat" and len(run.series) == 10
    thr1 = run.series[3]
    assert (thr1.name, thr1.cpu, thr1.cycles, thr1.total, thr1.max_us) == ("Thr-001", 1, 600002, 600002, 58.0)
    assert run.warnings == ()


def test_pasted_in_mail_with_warn_lines_and_no_trailing_newline() -> None:
    text = (DATA / "cyclictest-h200-q.txt").read_text()
    mail = (
        "Hi,\nWARN: stat /dev/cpu_dma_latency failed\nresults:\n\n"
        + "\n".join("> " + line for line in text.splitlines())
        + "\n\nThanks,\nA"
    )
    pasted = parse_latency_text(mail.rstrip("\n"), "mail")
    plain = _run("cyclictest-h200-q.txt")
    for a, b in zip(pasted.series, plain.series, strict=True):
        assert np.array_equal(a.counts, b.counts) and a.overflow == b.overflow


def test_clean_line_strips_escapes_and_quotes() -> None:
    assert clean_line("\x1b[4A> > T: 0 (1)\r") == "T: 0 (1)"


@pytest.mark.parametrize("text", ["\x7fELF\x02\x01\x01\x00\x00garbage", "just prose\nno numbers"])
def test_junk_is_one_input_error(text: str) -> None:
    with pytest.raises(InputError):
        parse_latency_text(text, "junk")

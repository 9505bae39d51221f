"""kexec downtime from a grabserial capture given to ``bootscope analyze`` (issue 26, point 9).

tests/data/kexec-chain-2hops-nochecks-grabserial.log is the real chain capture
tests/data/kexec-chain-2hops-nochecks.tsv rewritten in grabserial's ``[since_start delta] line`` form
(tests/data/tools/tsv_to_grabserial.py). The host stamps below are read by hand from the capture
(line numbers of the grabserial file; the .tsv holds the same rows one line lower, after its header
"# host_start_ns=588672703666"):

  line 327  [3.606239 ...] [    3.069102] kexec_core: Starting new kernel      (kernel 0 leaves)
  line 647  [6.149086 ...] [    2.082689] Run /init as init process            (kernel 1)
  line 655  [6.928971 ...] [    2.862478] kexec_core: Starting new kernel      (kernel 1 leaves)
  line 976  [9.732876 ...] [    1.934381] Run /init as init process            (kernel 2)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_here import run_in_process

from bootscope.analyze.breakdown import analyze_boot
from bootscope.analyze.handover import kexec_start_ns, with_kexec_start
from bootscope.parse import parse_log
from bootscope.sources.files import read_text_lines

DATA = Path(__file__).resolve().parents[1] / "data"
CAPTURE = DATA / "kexec-chain-2hops-nochecks-grabserial.log"
TSV = DATA / "kexec-chain-2hops-nochecks.tsv"

# kexec_downtime_s: the old kernel's "Starting new kernel" to the new kernel's "Run /init" (host s)
DOWNTIME_1_S = 6.149086 - 3.606239  # 2.542847
DOWNTIME_2_S = 9.732876 - 6.928971  # 2.803905
# kexec_blind_s: to the new kernel's printk zero, the "Run /init" line's host stamp less its printk time
BLIND_1_S = 6.149086 - 2.082689 - 3.606239  # 0.460158
BLIND_2_S = 9.732876 - 1.934381 - 6.928971  # 0.869524


def test_the_capture_holds_the_tsv_stamps() -> None:
    # the conversion kept each row's host stamp: grabserial's seconds since QEMU's start, to the us
    rows = TSV.read_text(encoding="utf-8").splitlines()
    assert rows[0] == "# host_start_ns=588672703666 outcome=ok"
    grab = CAPTURE.read_text(encoding="utf-8").splitlines()
    assert len(grab) == len(rows) - 1
    for number in (327, 647, 655, 976):
        ns, text = rows[number].split("\t", 1)
        assert grab[number - 1].endswith("] " + text)
        assert grab[number - 1].startswith(f"[{(int(ns) - 588672703666) / 1e9:.6f} ")


def test_analyze_gives_kexec_downtime_from_grabserial_stamps(capsys: pytest.CaptureFixture[str]) -> None:
    code = run_in_process("analyze", "--format", "json", str(CAPTURE))
    out = capsys.readouterr().out
    assert code == 0
    document = json.loads(out)
    assert document["input"]["format"] == "grabserial"
    metrics = [boot["metrics"] for boot in document["boots"]]
    assert len(metrics) == 3
    assert metrics[0]["kexec_downtime_s"] is None  # QEMU started kernel 0: no kexec before it
    assert metrics[1]["kexec_downtime_s"] == pytest.approx(DOWNTIME_1_S, abs=1e-6)
    assert metrics[2]["kexec_downtime_s"] == pytest.approx(DOWNTIME_2_S, abs=1e-6)
    assert metrics[1]["kexec_blind_s"] == pytest.approx(BLIND_1_S, abs=1e-6)
    assert metrics[2]["kexec_blind_s"] == pytest.approx(BLIND_2_S, abs=1e-6)


def test_the_table_view_shows_the_last_boots_downtime(capsys: pytest.CaptureFixture[str]) -> None:
    code = run_in_process("analyze", str(CAPTURE))
    out = capsys.readouterr().out
    assert code == 0
    row = next(
        line for line in out.splitlines() if "kexec_downtime_s" in line and "not in this log" not in line
    )
    assert f"{DOWNTIME_2_S:.3f}" in row


def test_handover_stamps_of_each_boot() -> None:
    boots = parse_log(read_text_lines(str(CAPTURE))).boots
    starts = [kexec_start_ns(boot) for boot in boots]
    assert starts == [round(3.606239e9), round(6.928971e9), None]  # kernel 2 powered off, no kexec
    paired = [
        (analyze_boot(boot, kexec_start_ns=ns)).metrics.kexec_downtime_s
        for boot, ns in with_kexec_start(boots)
    ]
    assert paired[0] is None
    assert paired[1:] == [pytest.approx(DOWNTIME_1_S, abs=1e-6), pytest.approx(DOWNTIME_2_S, abs=1e-6)]


def test_a_console_without_host_stamps_gives_no_downtime() -> None:
    # the same chain as plain console text (stamps stripped): nothing to measure on the host
    plain = [line.split("] ", 1)[1] for line in CAPTURE.read_text(encoding="utf-8").splitlines()]
    boots = parse_log(plain).boots
    assert len(boots) == 3
    for boot, ns in with_kexec_start(boots):
        assert ns is None
        assert analyze_boot(boot, kexec_start_ns=ns).metrics.kexec_downtime_s is None

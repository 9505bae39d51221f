"""Per-reboot kexec metrics from real chain captures (tests/data/kexec-chain-*.tsv), checked against
the host stamps of the marker lines read straight from the file."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from captures import load_chain_capture

from bootscope.analyze.kexec import chain_hops, clock_zero_ns, markers
from bootscope.model import Boot, LogLine, Outcome

_PRINTK_RE = re.compile(r"\[\s*(\d+\.\d+)\]")


@pytest.fixture
def chain(data_dir: Path) -> Boot:
    return load_chain_capture(data_dir / "kexec-chain-2hops-nochecks.tsv")


def test_downtime_load_and_blind_gap_match_the_host_stamps(chain: Boot) -> None:
    hops = chain_hops(chain, hops_planned=2)
    assert [(hop.hop, hop.outcome) for hop in hops] == [(0, Outcome.OK), (1, Outcome.OK), (2, Outcome.OK)]
    assert hops[0].metrics.kexec_downtime_s is None
    for k in (1, 2):
        exec_line = next(
            ln for ln in chain.lines if "kexec-exec" in ln.text and ln.text.endswith(f"hop={k - 1}")
        )
        prep_line = next(
            ln for ln in chain.lines if "kexec-prep" in ln.text and ln.text.endswith(f"hop={k - 1}")
        )
        load_line = next(
            ln for ln in chain.lines if "kexec-load" in ln.text and ln.text.endswith(f"hop={k - 1}")
        )
        init_line = next(
            ln for ln in chain.lines if "MARKER init" in ln.text and ln.text.endswith(f"hop={k}")
        )
        assert exec_line.host_ns and init_line.host_ns and prep_line.host_ns and load_line.host_ns
        metrics = hops[k].metrics
        assert metrics.kexec_downtime_s == pytest.approx(
            (init_line.host_ns - exec_line.host_ns) / 1e9, abs=1e-9
        )
        assert metrics.kexec_load_s == pytest.approx((load_line.host_ns - prep_line.host_ns) / 1e9, abs=1e-9)
        # The blind gap ends at the new kernel's printk zero, placed by its "Run /init" line.
        run_init = [ln for ln in hops[k].lines if "Run /init as init process" in ln.text]
        raw = next(
            ln
            for ln in chain.lines
            if "Run /init as init process" in ln.text and ln.host_ns == run_init[0].host_ns
        )
        match = _PRINTK_RE.search(raw.text)
        assert match is not None and raw.host_ns is not None
        zero_ns = raw.host_ns - float(match.group(1)) * 1e9
        assert metrics.kexec_blind_s == pytest.approx((zero_ns - exec_line.host_ns) / 1e9, abs=1e-6)
        assert metrics.kernel_init_s == pytest.approx(float(match.group(1)))
        assert hops[k].start_host_ns == exec_line.host_ns
        # the gap the new kernel cannot log is part of the downtime, never more
        assert metrics.kexec_blind_s is not None and 0 < metrics.kexec_blind_s < metrics.kexec_downtime_s


def test_each_hop_holds_only_its_own_kernel(chain: Boot) -> None:
    hops = chain_hops(chain, hops_planned=2)
    banners = [sum("Linux version" in line.text for line in hop.lines) for hop in hops]
    assert banners == [1, 1, 1]
    # every marker line of the capture lands in exactly one hop (the parser may split a junk prefix)
    marker_count = sum("BOOTSCOPE-MARKER" in line.text for line in chain.lines)
    assert sum("BOOTSCOPE-MARKER" in line.text for hop in hops for line in hop.lines) == marker_count
    assert [stamp.hop for hop in hops for stamp in hop.markers if stamp.name == "init"] == [0, 1, 2]


def test_failed_load_becomes_a_failed_sample_with_the_guest_text(data_dir: Path) -> None:
    boot = load_chain_capture(data_dir / "kexec-chain-bad-target.tsv")
    hops = chain_hops(boot, hops_planned=2)
    assert [hop.outcome for hop in hops] == [Outcome.OK, Outcome.KEXEC_ERROR]
    assert "Cannot determine the file type" in hops[1].reason
    assert hops[1].lines and "BOOTSCOPE-KEXEC-ERROR" in hops[1].lines[0].text


def _cut_after(
    boot: Boot, needle: str, occurrence: int, extra: tuple[LogLine, ...], outcome: Outcome
) -> Boot:
    seen = 0
    for index, line in enumerate(boot.lines):
        if needle in line.text:
            seen += 1
            if seen == occurrence:
                return replace(boot, lines=boot.lines[: index + 20] + extra, outcome=outcome, reason="cut")
    raise AssertionError(needle)


def test_timeout_in_a_new_kernel_keeps_the_completed_reboots(chain: Boot) -> None:
    cut = _cut_after(chain, "Linux version", 3, (), Outcome.TIMEOUT)
    hops = chain_hops(cut, hops_planned=2)
    assert [hop.outcome for hop in hops] == [Outcome.OK, Outcome.OK, Outcome.TIMEOUT]
    assert hops[1].metrics.kexec_downtime_s == chain_hops(chain)[1].metrics.kexec_downtime_s
    assert hops[2].metrics.kexec_downtime_s is None  # never reached its marker


def test_panic_mid_chain(chain: Boot) -> None:
    panic = LogLine(
        text="[    0.900000] Kernel panic - not syncing: VFS: Unable to mount root fs", host_ns=None
    )
    cut = _cut_after(chain, "Linux version", 2, (panic,), Outcome.PANIC)
    hops = chain_hops(cut, hops_planned=2)
    assert [hop.outcome for hop in hops] == [Outcome.OK, Outcome.PANIC]
    assert hops[1].reason == "cut"


def test_guest_powering_off_early_is_a_failure(chain: Boot) -> None:
    hops = chain_hops(chain, hops_planned=4)
    assert [hop.outcome for hop in hops][-1] is Outcome.KEXEC_ERROR
    assert "after kexec reboot 2 of 4" in hops[-1].reason


def test_markers_accept_both_formats() -> None:
    stamps = markers(
        [
            LogLine("BOOTSCOPE-MARKER uptime=3.28", host_ns=5),
            LogLine("junk \x00\xff BOOTSCOPE-MARKER kexec-exec uptime=6.49 hop=2", host_ns=7),
            LogLine("BOOTSCOPE-MARKER uptime=", host_ns=9),
        ]
    )
    assert [(s.name, s.uptime_s, s.hop, s.host_ns) for s in stamps] == [
        ("init", 3.28, None, 5),
        ("kexec-exec", 6.49, 2, 7),
    ]


def test_clock_zero_uses_the_latest_line_before_the_limit() -> None:
    lines = [
        LogLine("a", guest_s=0.0, host_ns=5_000_000_000),  # buffered: arrived late
        LogLine("b", guest_s=2.0, host_ns=6_000_000_000),
        LogLine("c", guest_s=3.0, host_ns=9_000_000_000),
    ]
    assert clock_zero_ns(lines, before_ns=8_000_000_000) == 4_000_000_000
    assert clock_zero_ns(lines) == 6_000_000_000
    assert clock_zero_ns([LogLine("untimed", host_ns=1)]) is None


def test_hostile_capture_does_not_raise() -> None:
    junk = Boot(
        lines=(LogLine("\x00\x01<script>" * 1000, host_ns=1), LogLine("[ 9999999999.1] x", host_ns=2)),
        outcome=Outcome.TIMEOUT,
        reason="killed",
    )
    hops = chain_hops(junk, hops_planned=3)
    assert hops[0].outcome is Outcome.TIMEOUT

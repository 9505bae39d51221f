"""The tests' own reader of a printed command line accepts one lost byte and nothing else."""

from __future__ import annotations

import pytest

from tests.lab.printed_cmdline import printed_cmdline

BANNER = "[    0.000000] Linux version 6.1.0-56-cloud-amd64"


def test_a_lost_byte_in_one_print_is_the_line_the_other_print_gives() -> None:
    ok = "console=ttyS0 panic=-1 bootscope.tune_cold=1"
    seen = [BANNER, "[    0.000000] Command line: console=ttyS0 panic=-1 bootscop.tune_cold=1"]
    assert printed_cmdline([*seen, f"[    0.250466] Kernel command line: {ok}"]) == ok
    old = ["[    0.000000] Command line: other"]  # a kernel before the last banner does not count
    assert printed_cmdline([*old, BANNER, f"[    0.0] Command line: {ok}"]) == ok


def test_two_different_lines_fail() -> None:
    lines = [BANNER, "[    0.0] Command line: console=ttyS0", "[    0.2] Kernel command line: ttyS0 q"]
    with pytest.raises(AssertionError):
        printed_cmdline(lines)
    with pytest.raises(AssertionError):
        printed_cmdline([BANNER, "no line"])

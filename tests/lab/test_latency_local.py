"""A real 2-second cyclictest on this machine through LocalHost: the stored histogram agrees with
the tool's own summary. Fails (does not skip) when rt-tests is missing."""

from __future__ import annotations

from bootscope import metrics
from bootscope.lab.latency_run import LatencySettings, measure_once
from bootscope.lab.localhost import LocalHost
from bootscope.parse.latency import parse_latency_text


def test_real_cyclictest_run_matches_its_own_footers() -> None:
    host = LocalHost()
    record, lines, run = measure_once(host, LatencySettings(duration_s=2, histogram_us=200), "base", 1)
    assert record.command[0] == "cyclictest" and "-h" in record.command
    for series in run.series:
        assert series.counts is not None and series.total == series.cycles  # rows + overflow = cycles
    # The numbers equal the tool's own summary line: "# Max Latencies:".
    footer = next(line.text for line in lines if line.text.startswith("# Max Latencies:"))
    assert record.metrics[metrics.LATENCY_MAX_US] == max(int(v) for v in footer.split(":")[1].split())
    # The stored log lines are the whole output: re-analysis gives the same histograms.
    again = parse_latency_text("\n".join(line.text for line in lines), "again")
    assert [s.total for s in again.series] == [s.total for s in run.series]
    info = host.host_info()
    assert info["kernel_release"] and "preemption" in info

"""Fast tests of `latency run`'s own logic with a fake place (no tool runs): the plan's guard rails,
the transcript, records stored per run through the real runner and store, resume, and the
across-run comparison (verdict only with 5 runs a side, Holm over p99.9/p99.99/max). The real runs
are in test_latency_local.py and test_latency_qemu.py."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from cli_here import run_in_process
from images import assert_png_drawn, lines_labelled, record_figures

from bootscope import metrics
from bootscope.errors import InputError
from bootscope.lab import runner
from bootscope.lab.plans.latency import build_latency_plan, short_run_notes
from bootscope.lab.plans.latency_tools import LatencySettings, tool_argv
from bootscope.lab.targets.fake import FakeTarget
from bootscope.lab.workloads import workload_from_document
from bootscope.lab.workloads.latency import LatencyWorkload
from bootscope.lab.workloads.latency_place import Measurement, guest_script
from bootscope.lab.workloads.latency_record import TOOL_ERROR, record_from_transcript
from bootscope.lab.workloads.protocol import SlotRun
from bootscope.model import LogLine
from bootscope.parse.latency_transcript import interrupt_counts, section_line, split_transcript
from bootscope.report.latency_runs_out import latency_runs_json, latency_runs_mail, latency_runs_text
from bootscope.store import Store
from bootscope.usecases import latency as latency_views
from bootscope.usecases.latency import analyze_latency_experiment

SHORT = LatencySettings(duration_s=30, histogram_us=100)


def cyclictest_text(threads: list[np.ndarray], limit_us: int) -> list[str]:
    """cyclictest -q -h LIMIT output for the given per-thread samples (us)."""
    hists = [np.bincount(np.minimum(t, limit_us), minlength=limit_us + 1) for t in threads]
    rows = [f"{i:06d} " + "\t".join(f"{h[i]:06d}" for h in hists) for i in range(limit_us)]
    return [
        "# /dev/cpu_dma_latency set to 0us",
        "# Histogram",
        *rows,
        "# Total: " + " ".join(f"{len(t):09d}" for t in threads),
        "# Min Latencies: " + " ".join(f"{int(t.min()):05d}" for t in threads),
        "# Avg Latencies: " + " ".join(f"{int(t.mean()):05d}" for t in threads),
        "# Max Latencies: " + " ".join(f"{int(t.max()):05d}" for t in threads),
        "# Histogram Overflows: " + " ".join(f"{int(h[limit_us]):05d}" for h in hists),
    ]


def transcript(
    tool_lines: list[str], status: int | None = 0, release: str = "6.1.0-rt"
) -> tuple[LogLine, ...]:
    header = "           CPU0       CPU1"
    lines = [
        section_line("facts"),
        f"kernel_release={release}",
        "kernel_version=#1 SMP PREEMPT_RT",
        "cmdline=quiet",
        section_line("interrupts-before"),
        header,
        "  0:         10          2   IO-APIC   2-edge      timer",
        "LOC:        100        200   Local timer",
        section_line("tool"),
        *tool_lines,
        section_line("interrupts-after"),
        header,
        "  0:         11          2   IO-APIC   2-edge      timer",
        "LOC:       5100       5200   Local timer",
    ]
    if status is not None:
        lines += [section_line("exit"), str(status)]
    return tuple(LogLine(text=line) for line in lines)


@dataclass
class FakePlace:
    """Latencies drawn from a seeded heavy-tailed distribution per variant (shift in us)."""

    shift_us: dict[str, int]
    name: str = "fake"
    calls: list[str] = field(default_factory=list)

    def prepare(self, variant, target, accel):  # type: ignore[no-untyped-def]
        return []

    def measure(self, variant, run: SlotRun, target) -> Measurement:  # type: ignore[no-untyped-def]
        self.calls.append(variant.name)
        rng = np.random.default_rng(run.first_index)
        threads = [
            (rng.pareto(3.0, 200_000) * 5 + 5 + self.shift_us.get(variant.name, 0)).astype(np.int64)
            for _ in range(2)
        ]
        return Measurement(transcript(cyclictest_text(threads, 400)), tool_argv(variant.settings))


def run_fake(
    tmp_path: Path, shift: dict[str, int], n: int, variants: list[str]
) -> tuple[Store, int, FakePlace]:
    plan = build_latency_plan("local", SHORT, variants, n, seed=5)
    place = FakePlace(shift)
    workload = LatencyWorkload(plan, places={v.name: place for v in plan.variants})
    store = Store.open(tmp_path / "l.db")
    result = runner.start(workload, FakeTarget(), store)
    return store, result.experiment.id, place


def test_unequal_settings_are_refused_unless_allowed_and_then_said_loudly(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="differ in interval_us"):
        build_latency_plan("local", SHORT, ["a", "b:interval=1000"], 2, seed=1)
    with pytest.raises(InputError, match="differ in load"):
        build_latency_plan("local", SHORT, ["a", "b:load=hackbench"], 2, seed=1)
    with pytest.raises(InputError, match="differ in smp"):
        build_latency_plan("debian:rt", SHORT, ["a", "b:smp=4"], 2, seed=1)
    with pytest.raises(InputError, match="different tools"):
        build_latency_plan("local", SHORT, ["a", "b:tool=oslat"], 2, seed=1, allow_unequal=True)
    with pytest.raises(InputError, match="cannot mix"):
        build_latency_plan("local", SHORT, ["a", "b:kernel=debian:rt"], 2, seed=1)
    with pytest.raises(InputError, match="append= needs a QEMU"):
        build_latency_plan("local", SHORT, ["a:append=threadirqs"], 2, seed=1)
    plan = build_latency_plan("local", SHORT, ["a", "b:threads=1"], 2, seed=1, allow_unequal=True)
    store = Store.open(tmp_path / "u.db")
    place = FakePlace({})
    result = runner.start(LatencyWorkload(plan, places={"a": place, "b": place}), FakeTarget(), store)
    assert any("WARNING" in note and "threads" in note for note in result.notes)
    analysis = analyze_latency_experiment(store, result.experiment.id)
    assert any("NOT LIKE FOR LIKE" in w and "threads" in w for w in analysis.warnings)


def test_kernel_and_command_line_variants_for_a_qemu_target() -> None:
    plan = build_latency_plan(
        "debian:amd64", SHORT, ["amd64", "rt:kernel=debian:rt,append=threadirqs isolcpus=1"], 2, seed=1
    )
    assert [(v.kernel, v.append) for v in plan.variants] == [
        ("debian:amd64", ""),
        ("debian:rt", "threadirqs isolcpus=1"),
    ]


def test_a_run_too_short_for_a_quantile_is_said_before_it_runs() -> None:
    plan = build_latency_plan("local", LatencySettings(duration_s=3, interval_us=200), [], 2, seed=1)
    notes = short_run_notes(plan.variants)
    assert len(notes) == 1 and "p99.99" in notes[0] and "20s" in notes[0]  # 15000 cycles: p99.9 resolves
    assert short_run_notes(build_latency_plan("local", SHORT, [], 2, seed=1).variants) == []


def test_cyclictest_is_run_the_way_practitioners_run_it() -> None:
    argv = tool_argv(
        LatencySettings(duration_s=60, interval_us=200, priority=95, histogram_us=400), "/t.json"
    )
    assert argv[:2] == ("cyclictest", "-S") and "-m" in argv and "--mainaffinity=0" in argv
    assert argv[argv.index("-p") + 1] == "95" and argv[argv.index("-h") + 1] == "400"
    assert argv[-1] == "--json=/t.json"
    pinned = tool_argv(LatencySettings(threads=1, affinity="1"))
    assert "-S" not in pinned and "--threads=1" in pinned and "--affinity=1" in pinned


def test_the_guest_script_starts_and_stops_the_load_around_the_tool() -> None:
    script = guest_script(LatencySettings(duration_s=5, load="hackbench"), cpus=2)
    tool_at, load_at, kill_at = (
        script.index("$TOOL 2>&1"),
        script.index("512 >/dev/null 2>&1 &"),
        script.index("killall"),
    )
    assert load_at < tool_at < kill_at
    assert script.index("interrupts-before") < load_at and script.rstrip().endswith("poweroff -f")
    for fact in ("realtime=", "sched_preempt=", "cmdline=", "governor=", "idle_driver=", "kernel_release="):
        assert fact in script


def test_transcript_sections_and_interrupts_survive_console_noise() -> None:
    lines = ["[    0.5] Run /init as init process", *(line.text for line in transcript(["x"], 0))]
    lines.insert(8, "[   12.3] random: crng init done\r")
    parsed = split_transcript(lines)
    assert parsed.facts()["kernel_release"] == "6.1.0-rt" and parsed.exit_status() == 0
    before = interrupt_counts(parsed.text("interrupts-before"))
    after = interrupt_counts(parsed.text("interrupts-after"))
    assert after["LOC"] - before["LOC"] == 10_000 and after["0"] - before["0"] == 1


def test_failed_tool_and_cut_transcript_are_recorded_as_such() -> None:
    failed = record_from_transcript(
        transcript(["cyclictest: permission denied"], 1), "a", 1, False, ("cyclictest",)
    )
    assert failed.outcome == TOOL_ERROR and "exited with 1" in failed.reason and not failed.metrics
    cut = record_from_transcript(transcript(["# Histogram"], None), "a", 2, False, ("cyclictest",))
    assert cut.outcome == "timeout"
    junk = record_from_transcript(transcript(["\x00\x01 binary junk"], 0), "a", 3, False, ("cyclictest",))
    assert junk.outcome == TOOL_ERROR


def test_each_run_is_stored_with_its_histogram_and_equals_its_own_summary(tmp_path: Path) -> None:
    store, exp, place = run_fake(tmp_path, {}, 3, ["a", "b"])
    assert (
        sorted(place.calls) == ["a"] * 3 + ["b"] * 3 and place.calls != ["a"] * 3 + ["b"] * 3
    )  # interleaved
    boots = store.boots(exp)
    assert len(boots) == 6 and all(b.outcome == "ok" and b.kernel_release == "6.1.0-rt" for b in boots)
    for boot in boots:
        lines = [line.text for line in store.boot_log(exp, boot.index)]
        footer = next(line for line in lines if line.startswith("# Max Latencies:"))
        assert boot.metrics[metrics.LATENCY_MAX_US] == max(int(v) for v in footer.split(":")[1].split())
        assert boot.metrics[metrics.LATENCY_P9999_US] is not None  # 200000 cycles resolve p99.99


def test_resume_rebuilds_the_latency_workload_from_the_stored_plan(tmp_path: Path) -> None:
    store, exp, _ = run_fake(tmp_path, {}, 1, [])
    workload = workload_from_document(store.experiment(exp).plan)
    assert isinstance(workload, LatencyWorkload)
    assert workload.plan.variants[0].settings == SHORT


def test_a_verdict_needs_five_runs_a_side(tmp_path: Path) -> None:
    store, exp, _ = run_fake(tmp_path, {"b": 40}, 2, ["a", "b"])
    result = analyze_latency_experiment(store, exp)
    assert {c.verdict for c in result.comparisons["b"]} == {"too few runs"}


def test_a_real_shift_is_found_with_holm_over_the_three_statistics(tmp_path: Path) -> None:
    store, exp, _ = run_fake(tmp_path, {"b": 40}, 5, ["a", "b"])
    result = analyze_latency_experiment(store, exp)
    by_stat = {c.metric: c for c in result.comparisons["b"]}
    assert set(by_stat) == {"p99.9", "p99.99", "max"}
    assert all(c.correction == "Holm over 3 statistics" for c in by_stat.values())
    assert by_stat["p99.9"].shift_estimate is not None and 30 < by_stat["p99.9"].shift_estimate < 50
    assert by_stat["p99.9"].verdict != "too few runs" and by_stat["p99.9"].p_adjusted is not None
    assert by_stat["p99.9"].p_adjusted < 0.05
    ratio = result.exceedance[
        "b"
    ]  # above the baseline's pooled p99.99: b, shifted by 40 us, exceeds far more
    assert (
        result.threshold_us is not None and ratio.ratio is not None and ratio.low > 1 and ratio.p_value < 0.05
    )
    text = latency_runs_text(result)
    assert "Holm" in text and "b against a" in text and "rate ratio" in text
    assert '"comparisons"' in latency_runs_json(result)
    assert all(len(line) <= 72 for line in latency_runs_mail(result).splitlines())


def test_bad_latency_options_exit_2_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "x.db")
    for args in (
        ("local", "--variant", "a", "--variant", "b:interval=500"),
        ("local", "--tool", "perf"),
        ("local", "--load", "fork-bomb"),
        ("local", "--duration", "soon"),
        ("local", "--variant", "a:append=threadirqs"),
    ):
        assert run_in_process("latency", "run", *args, "--db", db) == 2, args
        err = capsys.readouterr().err
        assert "Traceback" not in err and err.strip()


def _histograms_in_store(db: str, exp: int) -> dict[str, dict[int, int]]:
    """Per variant, the cyclictest histogram rows of its stored transcripts added up ({us: samples}),
    read here line by line (a plain reader, not the product's parser)."""
    pooled: dict[str, dict[int, int]] = {}
    with Store.open(db) as store:
        for boot in store.boots(exp):
            counts = pooled.setdefault(boot.variant, {})
            for line in store.boot_log(exp, boot.index):
                us, _, row = line.text.partition(" ")
                if len(us) == 6 and us.isdigit():
                    counts[int(us)] = counts.get(int(us), 0) + sum(int(c) for c in row.split("\t"))
    return {variant: {us: n for us, n in counts.items() if n} for variant, counts in pooled.items()}


def test_show_renders_a_stored_run_with_a_threshold_and_html(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, exp, _ = run_fake(tmp_path, {"b": 5}, 2, ["a", "b"])
    store.close()
    db, page = str(tmp_path / "l.db"), tmp_path / "r.html"
    assert (
        run_in_process("latency", "show", str(exp), "--db", db, "--threshold", "30us", "--html", str(page))
        == 0
    )
    out = capsys.readouterr().out
    assert "exceedances above 30 us" in out and "too few runs" in out
    assert page.read_text().count("<svg") == 2
    assert run_in_process("latency", "show", str(exp), "--db", db, "--threads") == 0
    table = capsys.readouterr().out
    assert "a#1" in table and "b#" in table and "p99.99" in table  # per-thread rows of every run
    assert run_in_process("latency", "show", str(exp), "--db", db, "--format", "json") == 0
    assert json.loads(capsys.readouterr().out)["exceedance_threshold_us"] is not None
    slide = tmp_path / "tails.png"
    saved = record_figures(monkeypatch)
    assert run_in_process("latency", "show", str(exp), "--db", db, "--plot", str(slide)) == 0
    assert_png_drawn(slide)  # 1920x1080, decodes, drawn in several colours
    (figure,) = saved
    histogram, survival = figure.axes
    drawn = {label: y for label, _, y in lines_labelled(histogram)}  # y[us]: samples, NaN for none
    shown = {v: {us: int(n) for us, n in enumerate(y) if n == n} for v, y in drawn.items()}
    assert shown == _histograms_in_store(db, exp)
    for label, _, beyond in lines_labelled(survival):  # P(latency > x): a fraction that never rises
        kept = beyond[beyond == beyond]
        assert label in drawn and 0 < kept[-1] <= kept[0] <= 1 and np.all(np.diff(kept) <= 0)


def test_ten_runs_give_a_gev_fit_with_return_levels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        latency_views, "GEV_RESAMPLES", 3
    )  # each refit takes ~0.3 s; intervals are tested in stats
    store, exp, _ = run_fake(tmp_path, {}, 10, [])
    assert analyze_latency_experiment(store, exp).gev == {}  # only when asked: it is slow
    result = analyze_latency_experiment(store, exp, gev=True)
    fit = result.gev["base"]
    assert fit.blocks == 10 and fit.block_cycles == 400_000
    assert set(fit.return_levels) == {10**6, 10**9}
    assert fit.return_levels[10**9][0] > fit.return_levels[10**6][0] > 0  # rarer means higher
    assert fit.heavy_tail == any("heavy tail" in w for w in result.warnings)  # Pareto samples: said loudly
    assert "GEV of 10 run maxima" in latency_runs_text(result)


@dataclass
class BurstyPlace(FakePlace):
    """As FakePlace, plus a burst of 400 samples at 300 us in the first run of variant ``b``."""

    burst_runs: int = 1

    def measure(self, variant, run: SlotRun, target) -> Measurement:  # type: ignore[no-untyped-def]
        self.calls.append(variant.name)
        rng = np.random.default_rng(run.first_index)
        threads = [(rng.pareto(3.0, 200_000) * 5 + 5).astype(np.int64) for _ in range(2)]
        if variant.name == "b" and self.calls.count("b") <= self.burst_runs:
            threads[0] = np.concatenate([threads[0], np.full(400, 300, dtype=np.int64)])
        return Measurement(transcript(cyclictest_text(threads, 400)), tool_argv(variant.settings))


def test_exceedances_bunched_in_one_run_are_said_to_cluster(tmp_path: Path) -> None:
    plan = build_latency_plan("local", SHORT, ["a", "b"], 5, seed=5)
    place = BurstyPlace({})
    workload = LatencyWorkload(plan, places={v.name: place for v in plan.variants})
    store = Store.open(tmp_path / "l.db")
    exp = runner.start(workload, FakeTarget(), store).experiment.id
    result = analyze_latency_experiment(store, exp, threshold_us=100)
    notes = [w for w in result.warnings if "cluster" in w]
    # b's 400 slow samples all sit in one run; a's tail is the same heavy tail in every run.
    assert len(notes) == 1 and notes[0].startswith("b: exceedances above 100 us cluster")
    counts = [int(c) for c in notes[0].split("counts per run ")[1].split(";")[0].split(", ")]
    first_b = min(r.index for r in store.boots(exp) if r.variant == "b")
    assert counts[0] >= 400 and max(counts[1:]) < 100  # the burst, then the steady tail
    assert f"run {first_b} holds {counts[0] / sum(counts):.0%}" in notes[0]
    steady = analyze_latency_experiment(store, exp, threshold_us=60)
    assert not [w for w in steady.warnings if w.startswith("a:") and "cluster" in w]

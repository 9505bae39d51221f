"""The tune's search on a seeded stand-in for the runner (fast, beside the real boots of
tests/cli/test_tune_cli.py): the probe is a real log, each knob's boots are the baseline's level plus
the knob's planted effect plus seeded noise, stored through the store's own API. It checks the
stages: a clear saving settles at once, a knob whose interval rules out a useful saving is dropped
at once, an undecided one gets more stages and ends as "no saving shown", a knob that breaks the
boot is rejected with what broke, and the budget is kept."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_tune_knobs import _lines_with_link

from bootscope.lab.plans.boot import Plan
from bootscope.model import LogLine
from bootscope.store import BootRecord, Store, VariantRecord
from bootscope.usecases.tune.decide import NO_SAVING, REJECTED, SAVING
from bootscope.usecases.tune.knob import words_of
from bootscope.usecases.tune.request import TuneRequest
from bootscope.usecases.tune.screen import MAX_STAGES
from bootscope.usecases.tune.search import tune

DATA = Path(__file__).resolve().parents[2] / "data"
BASE = "console=ttyS0 initcall_debug ignore_loglevel"
LEVEL_S = 10.0
# Each knob's planted effect on kernel_init_s (s) and its boots' noise (sd, s); None: the boot hangs.
EFFECTS: dict[str, tuple[float | None, float]] = {
    "-initcall_debug": (-0.20, 0.002),  # clear: settled at stage 1
    "-ignore_loglevel": (0.0, 0.0005),  # no effect, tight: rules out a useful saving at stage 1
}
# Small against its spread, which alternates one sd above and below (seeded noise would settle one of
# the undecided knobs now and then, as a 95 % interval must): never settled.
UNDECIDED = (-0.004, 0.05)
HANGS = None


class FakeRunner:
    """Stores a plan's boots as the runner would, their values made from ``EFFECTS``."""

    def __init__(
        self,
        store: Store,
        hang: str | None = None,
        probe_lines: list[LogLine] | None = None,
        metric: str = "kernel_init_s",
    ) -> None:
        self.store = store
        self.rng = np.random.default_rng(29)
        self.hang = hang
        self.metric = metric
        self.probe_lines = probe_lines or [
            LogLine(line) for line in (DATA / "debian-6.1-cloud-initcall-smp1.log").read_text().splitlines()
        ]
        self.plans: list[Plan] = []
        self.undecided_boots = 0

    def _knob(self, append: str) -> str:
        base, now = set(words_of(BASE)), set(words_of(append))
        changed = [f"-{w}" for w in sorted(base - now)] + [f"+{w}" for w in sorted(now - base)]
        return changed[0] if changed else ""

    def __call__(self, plan: Plan, meta: dict[str, str]) -> int:
        self.plans.append(plan)
        record = self.store.create_experiment(
            plan={"workload": "boot"}, seed=1, accel="tcg", accel_reason="test", host={},
            variants=[VariantRecord(v.name, v.config()) for v in plan.variants], meta=meta,
        )  # fmt: skip
        index = 0
        times = dict(plan.slots_a_round)  # the first look's baseline, booted more often a round
        for _ in range(plan.samples_per_variant):
            for variant in [v for v in plan.variants for _ in range(times.get(v.name, 1))]:
                knob = self._knob(variant.append)
                effect, sd = EFFECTS.get(knob, UNDECIDED) if knob else (0.0, 0.002)
                if knob == self.hang:
                    boot = BootRecord(variant=variant.name, index=index, warmup=False, outcome="timeout",
                                      reason="no marker after 120 s")  # fmt: skip
                    self.store.record_boot(record.id, boot, [LogLine("[    0.000000] Linux version 6.1")])
                else:
                    noise = float(self.rng.normal(0.0, sd))
                    if (effect, sd) == UNDECIDED:
                        self.undecided_boots += 1
                        noise = sd if self.undecided_boots % 2 else -sd
                    value = LEVEL_S + (effect or 0.0) + noise
                    boot = BootRecord(variant=variant.name, index=index, warmup=False, outcome="ok",
                                      metrics={self.metric: value})  # fmt: skip
                    lines = (
                        self.probe_lines
                        if meta.get("tune") == "probe"
                        else [LogLine(f"[{value:12.6f}] Run /init as init process")]
                    )
                    self.store.record_boot(record.id, boot, lines)
                index += 1
        return record.id


def _request(**given: object) -> TuneRequest:
    fields = {"kernel": "/k/bzImage", "append": BASE, "metric": "kernel_init_s", "boots_per_arm": 6,
              "alpha": 0.05, "allow": ("feature",), "min_saving": 0.01,
              "only": ("initcall_debug", "ignore_loglevel", "initcall_blacklist"), **given}  # fmt: skip
    return TuneRequest(**fields)  # type: ignore[arg-type]


def test_stages_spend_boots_only_on_the_undecided(tmp_path: Path) -> None:
    with Store.open(tmp_path / "t.db") as store:
        runner = FakeRunner(store)
        result = tune(_request(), store, runner=runner)
        screens = [
            p
            for p, run in zip(runner.plans, result.runs, strict=True)
            if store.experiment(run).meta.get("tune") == "screen"
        ]
    verdicts = {t.knob.name: t.verdict for t in result.tried}
    blacklists = [name for name in verdicts if name.startswith("+initcall_blacklist=")]
    assert len(blacklists) == 3  # the smp1 log's three slowest initcalls, with --allow feature
    # The first look (5 knobs, -n 6): 3 boots a knob against 12 of the baseline.
    assert verdicts["-initcall_debug"].decision == SAVING and verdicts["-initcall_debug"].boots == 3
    assert verdicts["-initcall_debug"].saving == pytest.approx(0.20, abs=0.01)
    dropped = verdicts["-ignore_loglevel"]
    assert (
        dropped.decision == NO_SAVING
        and "rules out a saving of 0.01 s or more" in dropped.why
        and dropped.boots == 3
    )
    for name in blacklists:
        assert verdicts[name].decision == NO_SAVING and verdicts[name].boots == 3 + 6 * (MAX_STAGES - 1)
        assert f"after {3 + 6 * (MAX_STAGES - 1)} boots" in verdicts[name].why
    # Stage 1: the baseline and 5 knobs; later stages: the baseline and the 3 undecided only.
    assert [len(p.variants) for p in screens] == [6, 4, 4]
    assert [p.samples_per_variant for p in screens] == [3, 6, 6]
    assert [p.slots_a_round for p in screens] == [(("baseline", 4),), (), ()]
    # One knob kept: its screen was the A/B, no final run.
    assert result.recommended is not None and result.recommended.knobs == ("-initcall_debug",)
    assert result.recommended.append == "console=ttyS0 ignore_loglevel"
    assert result.boots_spent == 1 + 3 * (4 + 5) + 2 * 4 * 6


def test_a_budget_stops_the_stages_and_a_hang_is_rejected(tmp_path: Path) -> None:
    with Store.open(tmp_path / "t.db") as store:
        runner = FakeRunner(store, hang="-ignore_loglevel")
        # Stage 1 (27 boots) and the probe and a final A/B (13) fit 50; a second stage (24) does not.
        result = tune(_request(budget=50), store, runner=runner)
    verdicts = {t.knob.name: t.verdict for t in result.tried}
    assert verdicts["-ignore_loglevel"].decision == REJECTED
    assert "3 of 3 boots failed (timeout: no marker" in verdicts["-ignore_loglevel"].why
    undecided = [v for name, v in verdicts.items() if name.startswith("+initcall_blacklist=")]
    assert all(v.decision == NO_SAVING and "after 3 boots" in v.why for v in undecided)
    assert result.boots_spent <= 50


def test_an_image_tune_masks_a_slow_unit_and_rejects_a_masked_getty(tmp_path: Path) -> None:
    # The probe is a real image boot whose critical chain holds a planted 5 s oneshot; masking it
    # saves its 5 s, and the getty masked on request (--try) never shows the prompt: rejected.
    delay = "+systemd.mask=bootscope-delay.service"
    getty = "+systemd.mask=serial-getty@ttyS0.service"
    EFFECTS[delay] = (-5.0, 0.3)
    try:
        with Store.open(tmp_path / "t.db") as store:
            lines = _lines_with_link("  └─bootscope-delay.service @18.712s +5.004s")
            runner = FakeRunner(store, hang=getty, probe_lines=lines, metric="login_prompt_s")
            request = _request(
                kernel="", image="default", metric="login_prompt_s", only=("systemd.mask",),
                tries=(getty.lstrip("+"),), boots_per_arm=4, min_saving=0.5,
            )  # fmt: skip
            result = tune(request, store, runner=runner)
    finally:
        del EFFECTS[delay]
    verdicts = {t.knob.name: t.verdict for t in result.tried}
    # Of the masks, the planted unit's and e2scrub_reap's (6.6 s in blame; no effect planted) are
    # proposed, systemd's own slow units never; the getty's is tried because it was asked for.
    assert set(verdicts) == {delay, getty, "+systemd.mask=e2scrub_reap.service"}
    assert verdicts["+systemd.mask=e2scrub_reap.service"].decision == NO_SAVING
    assert verdicts[delay].decision == SAVING and verdicts[delay].saving == pytest.approx(5.0, abs=0.5)
    assert verdicts[getty].decision == REJECTED and "2 of 2 boots failed (timeout" in verdicts[getty].why
    assert result.recommended is not None and result.recommended.knobs == (delay,)
    assert "systemd.mask=bootscope-delay.service" in result.recommended.append
    assert all(p.variants[0].image == "default" for p in runner.plans)

"""`--until precise`: the stopping rule, and the run loop that consults it, fed a fake sample stream
(a fake target that prints the guest's numbers; nothing boots)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from bootscope.errors import InputError
from bootscope.lab.plans.boot import Plan, VariantSpec
from bootscope.lab.plans.schedule import build_schedule
from bootscope.lab.plans.stopping import (
    STOP_METRIC,
    median_precise_enough,
    precision_stop_rule,
    stop_rule_for,
)
from bootscope.lab.qemu.process import BootConfig
from bootscope.lab.runner import RunResult
from bootscope.lab.targets.fake import FakeTarget
from bootscope.model import Boot, LogLine, Outcome
from bootscope.stats.sequential import precise_enough
from bootscope.store import Store
from bootscope.usecases import run as execute


def _median_half_width_by_hand(values: list[float], alpha: float) -> float | None:
    """Half-width of the order-statistic interval of the median, from the binomial directly: the
    largest k with 2 * P(Bin(n, 1/2) <= k - 1) <= alpha gives [x_(k), x_(n-k+1)]."""
    n = len(values)
    k = max((k for k in range(1, n // 2 + 1) if 2 * sps.binom.cdf(k - 1, n, 0.5) <= alpha), default=None)
    if k is None:
        return None
    ordered = sorted(values)
    return (ordered[n - k] - ordered[k - 1]) / 2


@pytest.mark.parametrize("seed", range(6))
def test_one_variant_stops_on_the_medians_interval(seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = list(2.0 + rng.normal(0, 0.05, size=int(rng.integers(6, 40))))
    half = _median_half_width_by_hand(values, 0.05)
    assert half is not None
    median = float(np.median(values))
    # Just above and just below the interval's own width: the rule must flip exactly there.
    assert median_precise_enough(values, half / median * 1.001, 0.05)
    assert not median_precise_enough(values, half / median * 0.999, 0.05)
    rule = precision_stop_rule(half / median * 1.001, "only")
    assert rule({"only": values})


def test_one_variant_never_stops_below_the_confidence_it_can_give() -> None:
    # Five identical values: the half-width is 0, but [min, max] of 5 covers the median only with
    # probability 1 - 2/32 < 0.95, so there is no 95 % interval yet.
    assert not median_precise_enough([3.0] * 5, 0.5, 0.05)
    assert median_precise_enough([3.0] * 6, 0.5, 0.05)


def test_every_variant_must_be_precise_against_the_baseline() -> None:
    rng = np.random.default_rng(7)
    base = list(10 + rng.normal(0, 0.01, 12))
    close = list(10.5 + rng.normal(0, 0.01, 12))  # far from the baseline, but tightly measured
    noisy = list(10 + rng.normal(0, 2.0, 12))
    rule = precision_stop_rule(0.01, "base")
    # The interval's width decides, not where b sits: a large, certain shift stops as readily as none.
    assert rule({"base": base, "close": close})
    assert rule({"base": base, "same": list(10 + rng.normal(0, 0.01, 12))})
    assert not rule({"base": base, "close": close, "noisy": noisy})
    assert rule({"base": base, "close": close, "noisy": noisy}) == all(
        precise_enough(base, other, 0.01, 0.05) for other in (close, noisy)
    )
    # A variant with fewer than five samples (failed boots) keeps the run going.
    assert not rule({"base": base, "close": close[:4]})
    # Order of the mapping does not matter: the baseline is named.
    assert rule({"close": close, "base": base})


def test_stop_rule_for_rejects_what_it_cannot_do() -> None:
    assert stop_rule_for(None, 0.01, "a") is None
    with pytest.raises(InputError, match="--until"):
        stop_rule_for("forever", 0.01, "a")
    with pytest.raises(InputError, match="--precision"):
        stop_rule_for("precise", 1.5, "a")


# --- the run loop with a fake sample stream ------------------------------------------------------


class _StreamTarget(FakeTarget):
    """The fake target, except that each variant (its config's append) draws the guest's uptime from
    its stream; the console holds one timed kernel line and the marker, as a real one would."""

    def __init__(self, streams: dict[str, Iterator[float]]) -> None:
        super().__init__()
        self.streams = streams

    def boot(
        self,
        config: BootConfig,
        on_line: Callable[[LogLine], None] | None = None,
        on_start: Callable[[int], None] | None = None,
    ) -> Boot:
        uptime_s = next(self.streams[config.append])
        start_ns = time.monotonic_ns()
        lines = (
            LogLine(f"[    {uptime_s - 0.05:.6f}] Run /init as init process", host_ns=start_ns + 10**9),
            LogLine(f"BOOTSCOPE-MARKER init uptime={uptime_s:.3f}", host_ns=start_ns + 2 * 10**9),
        )
        return Boot(lines=lines, outcome=Outcome.OK, accel="tcg", host_start_ns=start_ns)


def _run(
    tmp_path: Path, spreads: dict[str, float], **plan_options: object
) -> tuple[RunResult, Store, dict[str, list[float]]]:
    rngs = {name: random.Random(index) for index, name in enumerate(spreads)}
    drawn: dict[str, list[float]] = {name: [] for name in spreads}

    def stream(name: str) -> Iterator[float]:
        while True:
            value = round(3.0 + rngs[name].gauss(0, spreads[name]), 3)
            drawn[name].append(value)
            yield value

    target = _StreamTarget({name: stream(name) for name in spreads})
    plan = Plan(
        variants=tuple(VariantSpec(name, "k", append=name) for name in spreads),
        seed=11,
        warmup_per_variant=1,
        until="precise",
        **plan_options,  # type: ignore[arg-type]
    )
    store = Store.open(tmp_path / "until.db")
    return execute.start_experiment(plan, store, target=target), store, drawn


def _first_precise_round(samples: dict[str, list[float]], min_rounds: int, precision: float) -> int | None:
    """The first number of measured rounds (>= min_rounds) after which every variant is precise
    enough against the first, recomputed from the raw values in run order."""
    names = list(samples)
    for rounds in range(min_rounds, len(samples[names[0]]) + 1):
        base = samples[names[0]][:rounds]
        if all(precise_enough(base, samples[n][:rounds], precision, 0.05) for n in names[1:]):
            return rounds
    return None


def test_run_stops_after_the_first_precise_round(tmp_path: Path) -> None:
    result, store, drawn = _run(
        tmp_path, {"a": 0.03, "b": 0.03, "c": 0.03}, samples_per_variant=5, precision=0.01,
        max_n=40,
    )  # fmt: skip
    with store:
        samples = store.samples(result.experiment.id, STOP_METRIC)
        boots = store.boots(result.experiment.id)
    # Every boot drawn was stored, warm-ups apart, in the same order.
    assert samples == {name: values[1:] for name, values in drawn.items()}
    expected = _first_precise_round(samples, 5, 0.01)
    assert expected is not None and 5 < expected < 40
    assert {len(values) for values in samples.values()} == {expected}
    assert result.stopped_early and result.until_satisfied
    # Whole rounds, in the seeded interleaved order of the full (max-n) schedule.
    order = build_schedule(["a", "b", "c"], 40, 1, 11)[: 3 * (expected + 1)]
    assert [(b.index, b.variant, b.warmup) for b in boots] == [(s.index, s.variant, s.warmup) for s in order]


def test_run_gives_up_at_max_n_and_says_so(tmp_path: Path) -> None:
    result, store, _drawn = _run(
        tmp_path, {"a": 0.02, "noisy": 1.0}, samples_per_variant=5, precision=0.001, max_n=8
    )
    with store:
        samples = store.samples(result.experiment.id, STOP_METRIC)
        assert store.experiment(result.experiment.id).status == "complete"
    assert {len(values) for values in samples.values()} == {8}
    assert result.until_satisfied is False and not result.stopped_early
    assert any("not yet precise to 0.1 %" in note for note in result.notes)


def test_resuming_a_run_that_stopped_early_boots_nothing(tmp_path: Path) -> None:
    result, store, _drawn = _run(tmp_path, {"a": 0.01}, samples_per_variant=6, precision=0.05, max_n=30)
    assert result.stopped_early
    with store:
        again = execute.resume_experiment(result.experiment.id, store, target=FakeTarget())
        assert len(store.boots(result.experiment.id)) == 7  # one warm-up and six measured boots
    assert again.boots_run == 0

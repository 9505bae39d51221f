"""What one tried knob's boots say: whether the tuned boot is still the same system, and whether it
saved time, by how much, with its interval. A saving counts only when its whole interval lies above
zero, and Welch's interval (each side its own spread) agrees; an interval that holds zero is "no
saving shown", never a saving."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bootscope.analyze.systemd import systemd_accounting
from bootscope.metrics import LOGIN_PROMPT_S
from bootscope.model import LogLine
from bootscope.stats.compare import Options, compare
from bootscope.stats.welch import welch_interval
from bootscope.store.records import BootRecord

SAVING, NO_SAVING, SLOWER, REJECTED = "saving", "no saving shown", "slower", "rejected"
# Lines that mean a boot went wrong (panics, oopses, BUGs, kernel warnings with their traces).
_TROUBLE = re.compile(r"Kernel panic|\bBUG:|\bOops\b|WARNING: CPU: |Call Trace:|\bFAILED\b|segfault")
_STAMP = re.compile(r"^\[\s*\d+\.\d+\]\s*")


@dataclass(frozen=True, slots=True)
class Verdict:
    """One knob against the baseline: the saving (the metric's unit, positive when the tuned boot is
    faster: baseline minus tuned, Hodges-Lehmann), its interval, the boots counted a side, and the
    decision (saving, no saving shown, slower, rejected) with why; ``welch_ci``: the saving's Welch
    interval (difference of means, each side its own spread), which every verdict must agree with."""

    saving: float | None
    ci: tuple[float, float] | None
    boots: int
    decision: str
    why: str = ""
    welch_ci: tuple[float, float] | None = None

    def top(self) -> float | None:
        """Return the largest saving either interval allows (None without an interval)."""
        if self.ci is None:
            return None
        return self.ci[1] if self.welch_ci is None else max(self.ci[1], self.welch_ci[1])


def trouble_lines(logs: Sequence[Sequence[LogLine]]) -> set[str]:
    """Return the distinct trouble lines (panic, oops, BUG, warning, FAILED) of the boots' logs,
    their timestamps dropped."""
    return {_STAMP.sub("", line.text).strip() for log in logs for line in log if _TROUBLE.search(line.text)}


def same_system(
    baseline: Sequence[BootRecord],
    tuned: Sequence[BootRecord],
    baseline_logs: Sequence[Sequence[LogLine]],
    tuned_logs: Sequence[Sequence[LogLine]],
    metric: str,
) -> str:
    """Return what broke when the tuned boots are not the same system as the baseline's ('' when
    they are): a boot that failed where the baseline's did not, the metric's milestone not reached
    (nor an image's login prompt, which every baseline boot reached),
    a trouble line the baseline never printed, a systemd unit failed that never failed before."""
    final = [b for b in tuned if b.measured]
    failed = [b for b in final if not b.ok]
    if failed and all(b.ok for b in baseline if b.measured):
        first = failed[0]
        return f"{len(failed)} of {len(final)} boots failed ({first.outcome}: {first.reason[:120]})"
    reached = [b for b in baseline if b.counts]
    # The metric's milestone, and an image's login prompt whatever the metric (a tuned boot that
    # never shows the prompt is not the same system, however fast its systemd finished).
    for milestone in dict.fromkeys((metric, LOGIN_PROMPT_S)):
        if milestone != metric and not (
            reached and all(b.metrics.get(milestone) is not None for b in reached)
        ):
            continue
        unreached = [b for b in final if b.ok and b.metrics.get(milestone) is None]
        if unreached:
            return f"{len(unreached)} of {len(final)} boots did not reach {milestone}'s milestone"
    new = sorted(trouble_lines(tuned_logs) - trouble_lines(baseline_logs))
    if new:
        return f"a line the baseline never printed: {new[0][:160]}"
    units = sorted(failed_units(tuned_logs) - failed_units(baseline_logs))
    if units:
        return f"a unit failed that never failed in the baseline's boots: {units[0][:120]}"
    return ""


def failed_units(logs: Sequence[Sequence[LogLine]]) -> set[str]:
    """Return the units systemd listed as failed in any of the boots' logs (the image's collector
    prints them; none for a boot without systemd)."""
    found: set[str] = set()
    for log in logs:
        accounting = systemd_accounting(log)
        if accounting is not None:
            found.update(accounting.failed)
    return found


def judge(baseline: Sequence[float], tuned: Sequence[float], metric: str, unit: str, alpha: float) -> Verdict:
    """Return the saving of ``tuned`` against ``baseline`` (values of ``metric`` in ``unit``) with
    its (1 - ``alpha``) interval: "saving" when the whole interval is above zero, "slower" when it
    is below, else "no saving shown" (also when the boots are too few for an interval)."""
    n = min(len(baseline), len(tuned))
    if n < 2:
        return Verdict(None, None, n, NO_SAVING, "fewer than 2 boots a side")
    found = compare(baseline, tuned, metric, unit, Options(alpha=alpha, power=False, bootstrap_resamples=0))
    saving = None if found.shift_estimate is None else -found.shift_estimate
    if found.shift_ci is None:
        return Verdict(saving, None, n, NO_SAVING, "too few boots for an interval")
    ci = (-found.shift_ci[1], -found.shift_ci[0])
    welch_ci = welch_interval(tuned, baseline, alpha)  # mean(baseline) - mean(tuned): a saving
    low = ci[0] if welch_ci is None else min(ci[0], welch_ci[0])
    high = ci[1] if welch_ci is None else max(ci[1], welch_ci[1])
    if low > 0:
        return Verdict(saving, ci, n, SAVING, welch_ci=welch_ci)
    if high < 0:
        return Verdict(saving, ci, n, SLOWER, welch_ci=welch_ci)
    why = "its interval holds zero"
    if ci[0] > 0 or ci[1] < 0:
        why = "the two arms spread unlike each other, and Welch's interval, which allows that, holds zero"
    return Verdict(saving, ci, n, NO_SAVING, why, welch_ci=welch_ci)


def rejected(why: str, boots: int) -> Verdict:
    """Return the verdict of a knob whose boots are not the same system (``why``: what broke)."""
    return Verdict(None, None, boots, REJECTED, why)


def values_by_variant(samples: Mapping[str, Sequence[float]], names: Sequence[str]) -> dict[str, list[float]]:
    """Return each of ``names``' values (empty when it has none)."""
    return {name: list(samples.get(name, ())) for name in names}

"""What the fleet queries return (``query.py``), as the renderers (``report/fleet_out.py``) draw it.

Outcomes are counted apart (``logfile.py`` defines them): ``failed`` boots died or hung, or a run
said they failed; ``incomplete`` boots have a log that stops before the kernel ran init without a
failure (nobody knows how they ended); ``not-run`` boots are a device farm's MISS or SKIP. A
failure rate is failed / (ok + failed): incomplete and not-run boots enter no rate.
"""

from __future__ import annotations

from dataclasses import dataclass

from bootscope.stats.stratified import StratifiedShift

CONFIDENCE = 0.95
SLOWER = "slower"
EXIT_SLOWER = 1


@dataclass(frozen=True, slots=True)
class OutcomeCounts:
    """Boots by outcome: ok, failed, incomplete and not run."""

    ok: int = 0
    failed: int = 0
    incomplete: int = 0
    not_run: int = 0

    @property
    def boots(self) -> int:
        """Return every boot counted."""
        return self.ok + self.failed + self.incomplete + self.not_run

    @property
    def decided(self) -> int:
        """Return the boots whose log says how they ended (ok + failed): a failure rate's base."""
        return self.ok + self.failed


@dataclass(frozen=True, slots=True)
class QuantileValue:
    """One quantile of a group: p, its value and its distribution-free interval (None: unbounded
    above or too few boots for that confidence), in the metric's unit."""

    p: float
    value: float | None
    low: float | None
    high: float | None


@dataclass(frozen=True, slots=True)
class GroupSummary:
    """One group of a fleet summary: its key values, ok boots with the metric (n), the quantiles,
    the boots by outcome and the failure rate's exact binomial interval (failed of ok + failed;
    None when no boot of the group is ok or failed)."""

    key: tuple[str | None, ...]
    n: int
    quantiles: tuple[QuantileValue, ...]
    counts: OutcomeCounts
    failed_ci: tuple[float, float] | None

    @property
    def boots(self) -> int:
        """Return every boot of the group."""
        return self.counts.boots

    @property
    def failed(self) -> int:
        """Return the group's failed boots."""
        return self.counts.failed

    @property
    def failed_rate(self) -> float | None:
        """Return failed / (ok + failed); None without such boots."""
        decided = self.counts.decided
        return self.counts.failed / decided if decided else None


@dataclass(frozen=True, slots=True)
class FleetSummary:
    """``fleet summary``: the metric, the grouping fields, one row per group, and notes (a field
    no boot has a value of)."""

    metric: str
    by: tuple[str, ...]
    groups: tuple[GroupSummary, ...]
    confidence: float = CONFIDENCE
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Outlier:
    """A boot far from its group: group key, file, boot number, host (if the metadata names one),
    its value, the group's median and MAD, and the modified z-score (value - median) / (1.4826 MAD)."""

    key: tuple[str | None, ...]
    path: str
    boot: int
    host: str | None
    value: float
    median: float
    mad: float
    z: float


@dataclass(frozen=True, slots=True)
class OutlierList:
    """``fleet outliers``: the metric, the grouping fields, the boots found, the z cut, and the
    fleet's boots by outcome (only ok boots with the metric are judged)."""

    metric: str
    by: tuple[str, ...]
    found: tuple[Outlier, ...]
    z_cut: float
    counts: OutcomeCounts = OutcomeCounts()
    notes: tuple[str, ...] = ()


def verdict(low: float | None, high: float | None) -> str:
    """Return ``slower``, ``faster`` or ``no difference`` for an interval of canary - control
    (lower is better for every boot metric); ``too few boots`` without an interval."""
    if low is None or high is None:
        return "too few boots"
    if low > 0:
        return SLOWER
    if high < 0:
        return "faster"
    return "no difference"


@dataclass(frozen=True, slots=True)
class CohortComparison:
    """``fleet compare``: the cohort field, the canary and control cohorts, the strata field (None:
    one stratum), the stratified shift (ok boots only), and each cohort's boots by outcome."""

    metric: str
    cohort_field: str
    canary: str
    control: str
    strata: str | None
    result: StratifiedShift
    alpha: float = 0.05
    canary_counts: OutcomeCounts = OutcomeCounts()
    control_counts: OutcomeCounts = OutcomeCounts()

    @property
    def pooled_verdict(self) -> str:
        """Return the pooled shift's verdict (see :func:`verdict`)."""
        return verdict(*(self.result.ci or (None, None)))

    @property
    def stratum_verdicts(self) -> tuple[str, ...]:
        """Return each stratum's verdict, in the strata's order: judged after Holm's correction over
        the strata (``no difference`` when its Holm p is not below alpha and it has an interval)."""
        return tuple(
            verdict(*(s.ci or (None, None))) if s.p_holm < self.alpha or s.ci is None else "no difference"
            for s in self.result.strata
        )

    @property
    def exit_code(self) -> int:
        """Return ``fleet compare``'s exit code: 1 when the canary is slower, pooled or in a stratum."""
        return EXIT_SLOWER if SLOWER in (self.pooled_verdict, *self.stratum_verdicts) else 0

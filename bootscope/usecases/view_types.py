"""What the picture use cases hand the renderers: one boot (:class:`BootView`) and one stored run
(:class:`RunView`), already analysed and summarised; ``report`` only draws them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bootscope.model import Breakdown, Comparison, LogLine, Sample, SideSummary, UnitSpan
from bootscope.stats.attribution import DiffResult

if TYPE_CHECKING:  # the tune's modules load the runner: only a report of a tune's run needs them
    from bootscope.usecases.tune.stored import StoredTune


@dataclass(frozen=True, slots=True)
class BootView:
    """One boot as the report shows it: a label, its breakdown, its lines (in console order) and, for
    a full userspace boot, systemd's units (monotonic s, the same clock as the kernel's printk)."""

    label: str
    breakdown: Breakdown
    lines: tuple[LogLine, ...]
    units: tuple[UnitSpan, ...] = ()


@dataclass(frozen=True, slots=True)
class FailedBoot:
    """A boot of a run that did not reach its marker, and why."""

    variant: str
    index: int
    outcome: str
    reason: str


@dataclass(frozen=True, slots=True)
class RunView:
    """A stored run as the report shows it; ``summaries`` maps metric -> one SideSummary per variant."""

    title: str
    variants: tuple[str, ...]
    metrics: tuple[str, ...]
    samples: tuple[Sample, ...]
    comparisons: tuple[Comparison, ...] = ()
    summaries: Mapping[str, tuple[SideSummary, ...]] = field(default_factory=dict)
    failures: tuple[FailedBoot, ...] = ()
    environment: tuple[tuple[str, str], ...] = ()
    example: BootView | None = None
    diffs: tuple[DiffResult, ...] = ()


@dataclass(frozen=True, slots=True)
class ReportView:
    """What ``bootscope report`` draws: a stored run (``run``) with the tune it belongs to (``tune``,
    None: no tune's), or a boot of the logs (``boot``) with the other boots of those logs
    (``others``) and a boot to set beside it (``vs``, None: none)."""

    run: RunView | None = None
    boot: BootView | None = None
    vs: BootView | None = None
    others: tuple[BootView, ...] = ()
    tune: StoredTune | None = None


@dataclass(frozen=True, slots=True)
class MetricValues:
    """One metric's values (its unit) per variant of a run or per log file, and per variant its
    median with the median's interval (None: none; empty for logs)."""

    values: Mapping[str, list[float]]
    medians: Mapping[str, tuple[float, float | None, float | None]] = field(default_factory=dict)

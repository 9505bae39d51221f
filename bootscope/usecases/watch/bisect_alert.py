"""``bootscope bisect-run --alert ID``: start ``git bisect`` on an alert's revision range.

The alert names the last revision before its step (good) and the last that may hold it (bad); the
reference is a stored run of the good revision in the alert's worst series (its variant whose
fingerprint is that series'), the metric the series', and the threshold half the step's relative
size unless given (the step itself is then "bad", its absence "good"). In the git working tree of
the current directory: ``git bisect start BAD GOOD`` then ``git bisect run`` with this bootscope's
``bisect-run --reference RUN:VARIANT`` and the options given for each step.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bootscope.errors import InputError
from bootscope.store import Store
from bootscope.store.watch import Alert
from bootscope.store.watch_series import load_series
from bootscope.usecases.watch.alerts import show_alert
from bootscope.usecases.watch.labels import REVISION
from bootscope.usecases.watch.series import variant_in_series

_GIT_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True)
class AlertBisect:
    """What a bisect of an alert runs: the good and bad revisions, the reference ``RUN:VARIANT``,
    the metric, and the threshold (text, as ``bisect-run --threshold`` takes it)."""

    alert: int
    good: str
    bad: str
    reference: str
    metric: str
    threshold: str


def _reference(store: Store, alert: Alert) -> tuple[str, str, str]:
    """(RUN:VARIANT of the good revision in the alert's largest step's series, metric, threshold)."""
    steps = [item for item in alert.items if item.shift is not None and item.good_revision]
    if not steps:
        raise InputError(f"alert {alert.id} has no step to bisect (a missing-data alert names none)")
    worst = max(steps, key=lambda item: abs(item.shift or 0.0))
    if worst.fingerprint.get("source") != "run":
        raise InputError(
            f"alert {alert.id}'s series is a fleet import: no stored run boots its good revision"
        )
    series = next(iter(load_series(store, [worst.series])), None)
    if series is None:
        raise InputError(f"alert {alert.id}'s series is no longer stored; run `bootscope watch`")
    for run in sorted(series.runs, reverse=True):
        record = store.experiment(run)
        if record.meta.get(REVISION, "") != worst.good_revision:
            continue
        variant = variant_in_series(record, worst.series, worst.metric, series.component)
        if variant is not None:
            relative = abs(worst.shift or 0.0) / worst.before if worst.before else 0.05
            return f"{run}:{variant}", worst.metric, f"{max(relative / 2, 0.001):.4f}"
    raise InputError(
        f"no stored run labelled revision={worst.good_revision} (bootscope run --meta revision=...)"
        f" holds the good side of alert {alert.id}; give --reference"
    )


def plan_alert_bisect(db: str, alert_id: int, threshold: str | None = None) -> AlertBisect:
    """Return the bisect of alert ``alert_id`` (see the module docstring). Raises InputError for an
    alert without a step, a fleet series or no stored run of its good revision; StoreLookupError
    for an unknown alert."""
    alert = show_alert(db, alert_id)
    with Store.open(db, create=False) as store:
        reference, metric, half = _reference(store, alert)
    good = alert.good_revision or ""
    return AlertBisect(alert_id, good, alert.last_revision, reference, metric, threshold or half)


def _git(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=_GIT_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise InputError(f"git {args[0]}: {error}") from None


def start_alert_bisect(plan: AlertBisect, step_args: Sequence[str], db: str, cwd: Path) -> int:
    """Start ``git bisect`` in ``cwd`` on the plan's range, each step ``bootscope bisect-run`` with
    the plan's reference, metric and threshold and ``step_args``; return git's exit status. Raises
    InputError when ``cwd`` is not in a git work tree or a revision is not one of its commits."""
    for revision in (plan.good, plan.bad):
        if _git(["rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"], cwd).returncode != 0:
            raise InputError(
                f"{revision[:60]!r} is not a commit here (alert {plan.alert}'s revisions must be commits"
                " of the tree you bisect: label runs with --meta revision=$(git rev-parse HEAD))"
            )
    started = _git(["bisect", "start", plan.bad, plan.good], cwd)
    if started.returncode != 0:
        raise InputError(f"git bisect start failed: {started.stderr.strip()[:200]}")
    step = [sys.executable, "-m", "bootscope", "bisect-run", "--reference", plan.reference]
    step += ["--metric", plan.metric, "--threshold", plan.threshold, "--db", db, *step_args]
    print(f"bootscope: git bisect run {shlex.join(step)}", file=sys.stderr)
    return subprocess.run(["git", "bisect", "run", *step], cwd=cwd, check=False).returncode

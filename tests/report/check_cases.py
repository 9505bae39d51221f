"""``check`` results for the JUnit and Markdown report tests, made by the real use case over the stored
demo run (tests/data/golden/demo-6.1-cloud.db: 5 real TCG boots each of smp1, smp2 and ic, see
golden_cases.py) and one real single-boot log:

- ``regression``: smp2 against a reference of smp1 (exit 1: the total and 13 components slower);
- ``faster``: smp1 against a reference of smp2 (exit 0: the total and 12 components faster);
- ``pass``: smp1 against itself (exit 0: nothing moved);
- ``cannot-tell``: one boot (tests/data/debian-6.1-cloud-initcall-smp1.log) against smp1 (exit 125:
  the total and every component of the reference with 1 boot);
- ``undecided``: smp2 against smp1 at ``--threshold 18%``, about its shift (exit 125: the total
  neither proven slower nor within the margin);
- ``components-only``: the same at 14% (exit 1: the total undecided, 6 components slower).

The store is copied first: opening it may upgrade its schema.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from bootscope import defaults
from bootscope.metrics import DEFAULT_METRIC
from bootscope.report.check_out import reference_text
from bootscope.report.check_rows import CheckAsked
from bootscope.usecases.check import check, save_baseline
from bootscope.usecases.check_rule import CheckResult

TESTS = Path(__file__).parent.parent
DEMO_DB = TESTS / "data" / "golden" / "demo-6.1-cloud.db"
ONE_BOOT = TESTS / "data" / "debian-6.1-cloud-initcall-smp1.log"
HOSTILE = 'a<b>&"c|d `e` ]]> <!-- @someone *x* _y_ #1'
THRESHOLD, MIN_SHIFT = "5%", "1ms"


@dataclass(frozen=True)
class Case:
    """One check: its result, what it was asked (for the renderers) and the command line that gives
    the same result (after ``bootscope``)."""

    result: CheckResult
    asked: CheckAsked
    argv: tuple[str, ...]


def demo_cases(directory: Path) -> dict[str, Case]:
    """Return the checks above by name, their store copy and reference files written in ``directory``."""
    db = directory / "demo.db"
    shutil.copyfile(DEMO_DB, db)
    references = {}
    for variant in ("smp1", "smp2"):
        saved = save_baseline([f"1:{variant}"], str(db), alpha=defaults.ALPHA)
        references[variant] = directory / f"ref-{variant}.json"
        references[variant].write_text(reference_text(saved.document), encoding="utf-8")
    plan = {
        "regression": ("1:smp2", "smp1", THRESHOLD),
        "faster": ("1:smp1", "smp2", THRESHOLD),
        "pass": ("1:smp1", "smp1", THRESHOLD),
        "cannot-tell": (str(ONE_BOOT), "smp1", THRESHOLD),
        "undecided": ("1:smp2", "smp1", "18%"),
        "components-only": ("1:smp2", "smp1", "14%"),
    }
    cases = {}
    for name, (new, against, threshold) in plan.items():
        result = check(
            [new], references[against], threshold=threshold, min_shift=MIN_SHIFT, metric=DEFAULT_METRIC,
            alpha=defaults.ALPHA, db=str(db), warn=lambda line: None,
        )  # fmt: skip
        asked = CheckAsked(str(references[against]), threshold, MIN_SHIFT, defaults.ALPHA)
        argv = (
            "check",
            new,
            "--against",
            str(references[against]),
            "--db",
            str(db),
            "--threshold",
            threshold,
        )
        cases[name] = Case(result, asked, argv)
    return cases

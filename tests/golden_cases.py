"""The golden cases: commands whose output must not change when the code is only moved or re-seamed.

Each case is a ``bootscope`` command line over fixed inputs (every log in tests/data, the stored runs
in tests/data/golden/demo-6.1-cloud.db: 15 real TCG boots of the pinned 6.1 cloud kernel in three
variants and 6 real cyclictest runs on this host). Its stdout and exit status were recorded before
the move into lab/usecases (commit a027ce5's code) in tests/data/golden/expected/; test_golden.py
runs each case again and compares the bytes. A deliberate change of output re-records them:
``BOOTSCOPE_GOLDEN_UPDATE=1 .venv/bin/pytest tests/test_golden.py`` (and the commit says why).

``{db}``, ``{fleet}`` and ``{tmp}`` are a per-test copy of the demo store, a fresh fleet store and a
scratch directory; ``setup`` cases run first, for the cases after them to read what they wrote.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "golden"
DEMO_DB = GOLDEN / "demo-6.1-cloud.db"
EXPECTED = GOLDEN / "expected"
# Not logs of a boot, or the golden files themselves: every other file in tests/data is analysed.
_NOT_ANALYSED = {"README.md"}


@dataclass(frozen=True)
class Case:
    """One command line (``argv`` after ``bootscope``) and the name of its golden file."""

    name: str
    argv: tuple[str, ...]


def _logs() -> list[Path]:
    return sorted(
        p for p in DATA.rglob("*") if p.is_file() and p.name not in _NOT_ANALYSED and GOLDEN not in p.parents
    )


def analyze_cases() -> list[Case]:
    """``analyze --format json`` of every file in tests/data (a path relative to the repository)."""
    root = DATA.parent.parent
    cases = []
    for path in _logs():
        rel = path.relative_to(root)
        name = "analyze--" + str(path.relative_to(DATA)).replace("/", "--")
        cases.append(Case(name, ("analyze", "--format", "json", str(rel))))
    return cases


SMP1 = "tests/data/debian-6.1-cloud-initcall-smp1.log"
SMP4 = "tests/data/debian-6.1-cloud-initcall-smp4.log"
A = "8.7,8.4,8.6,8.2,9.0,8.7,8.8,9.3,8.8,8.3"  # seed 000's two sides of ten boots
B = "8.5,8.2,7.6,8.2,8.7,8.2,7.8,8.2,9.3,8.4"

REPORTS = ("--markdown", "{tmp}/check.md", "--junit", "{tmp}/check.xml")
STORE_CASES = [
    Case("runs", ("runs", "--db", "{db}", "--format", "json")),
    Case("export-json", ("export", "1", "--db", "{db}", "--format", "json")),
    Case("export-csv", ("export", "1", "--db", "{db}", "--format", "csv")),
    Case(
        "analyze-run-1-boot-2", ("analyze", "--run", "1", "--boot", "2", "--db", "{db}", "--format", "json")
    ),
    Case("compare-numbers", ("compare", "--a", A, "--b", B, "--format", "json")),
    Case("compare-numbers-sign", ("compare", "--a", A, "--b", B, "--method", "sign", "--format", "json")),
    Case("compare-run", ("compare", "1", "--baseline", "smp1", "--db", "{db}", "--format", "json")),
    Case(
        "compare-run-markdown", ("compare", "1", "--baseline", "smp1", "--db", "{db}", "--format", "markdown")
    ),
    Case(
        "compare-run-userspace",
        (
            "compare",
            "latest",
            "--db",
            "{db}",
            "--metric",
            "kernel_init_s",
            "--baseline",
            "smp2",
            "--format",
            "csv",
        ),
    ),
    Case(
        "diff-run",
        ("diff", "1", "--baseline", "smp1", "--variant", "smp2", "--db", "{db}", "--format", "json"),
    ),
    Case(
        "diff-run-ic",
        ("diff", "1", "--baseline", "smp1", "--variant", "ic", "--db", "{db}", "--format", "json"),
    ),
    Case("diff-logs", ("diff", "--a-logs", SMP1, "--b-logs", SMP4, "--format", "json")),
    Case("baseline-save", ("baseline", "save", "1:smp1", "-o", "{tmp}/ref.json", "--db", "{db}")),
    Case("check-run", ("check", "1:smp2", "--against", "{tmp}/ref.json", "--db", "{db}", "--format", "json")),
    Case(
        "check-same", ("check", "1:smp1", "--against", "{tmp}/ref.json", "--db", "{db}", "--format", "json")
    ),
    Case("latency-show", ("latency", "show", "2", "--db", "{db}", "--format", "json")),
    Case(
        "latency-analyze", ("latency", "analyze", "tests/data/latency/cyclictest-q.txt", "--format", "json")
    ),
    Case(
        "fleet-import", ("fleet", "import", "tests/data/hw", "--db", "{fleet}", "-j", "1", "--format", "json")
    ),
    Case("fleet-summary", ("fleet", "summary", "--db", "{fleet}", "--format", "json")),
    Case(
        "fleet-summary-by-series",
        ("fleet", "summary", "--db", "{fleet}", "--by", "kernel_series,arch", "--format", "json"),
    ),
    # What a user reads in an 80-column pipe (test_golden sets COLUMNS=80): the tables themselves.
    Case("fleet-summary-text", ("fleet", "summary", "--db", "{fleet}")),
    Case("runs-text", ("runs", "--db", "{db}")),
    Case("compare-text", ("compare", "1", "--db", "{db}")),
    Case("diff-text", ("diff", "1", "--baseline", "smp1", "--variant", "smp2", "--db", "{db}")),
    Case("check-text", ("check", "1:smp1", "--against", "{tmp}/ref.json", "--db", "{db}")),
    # The regression's table on stdout; its PR comment and JUnit file are kept as check-reports-*.
    Case("check-reports", ("check", "1:smp2", "--against", "{tmp}/ref.json", "--db", "{db}", *REPORTS)),
    Case("latency-show-text", ("latency", "show", "2", "--db", "{db}")),
    Case("fleet-outliers", ("fleet", "outliers", "--db", "{fleet}", "--format", "json")),
]


def all_cases() -> list[Case]:
    """Every golden case, in the order they run (store cases after a setup case read what it wrote)."""
    return analyze_cases() + STORE_CASES

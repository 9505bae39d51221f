"""`check --junit FILE` (bootscope/report/check_junit.py), read back with a real JUnit reader
(junitparser, what CI plugins parse alike): one testsuite, a testcase for the total and one for every
component check names, counts that follow from the result, the numbers in a failure's text, hostile
names kept as written, and the CLI's exit code and stdout unchanged by the option."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from check_cases import HOSTILE, MIN_SHIFT, THRESHOLD, Case, demo_cases
from cli_here import run_in_process
from junitparser import Failure, JUnitXml, Skipped, TestSuite

from bootscope.report.atomic import write_text_atomically
from bootscope.report.check_junit import check_junit
from bootscope.stats.decision import UNKNOWN
from bootscope.usecases.check_rule import CheckResult
from bootscope.usecases.reference import METHOD

EXIT_CODES = {
    "regression": 1,
    "faster": 0,
    "pass": 0,
    "cannot-tell": 125,
    "undecided": 125,
    "components-only": 1,
}
CASES = tuple(EXIT_CODES)


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    return demo_cases(tmp_path_factory.mktemp("check-junit"))


def _suite(path: Path) -> TestSuite:
    """Return the one testsuite of the JUnit file at ``path``, read by junitparser."""
    suites = list(JUnitXml.fromfile(str(path)))
    assert [suite.name for suite in suites] == ["bootscope check"]
    return suites[0]


def _read(result: CheckResult, case: Case, path: Path) -> TestSuite:
    write_text_atomically(path, check_junit(result, case.asked))
    return _suite(path)


def _expected(result: CheckResult) -> tuple[set[str], int, int]:
    """Return the testcase names, failures and skips the result calls for, from its own fields: the
    total (failed when a regression, skipped when undecided) and each component it names."""
    total_undecided = result.total is None or result.total.verdict == UNKNOWN
    components = [
        *((f.kind, f.name) for f in result.regressions if f.kind != "total"),
        *((f.kind, f.name) for f in result.improvements if f.kind != "total"),
        *((u.kind, u.name) for u in result.cannot_tell),
    ]
    names = {f"total {result.metric}"} | {f"{kind} {name}" for kind, name in components}
    assert len(names) == 1 + len(components)  # no component named twice
    return names, len(result.regressions), len(result.cannot_tell) + total_undecided


@pytest.mark.parametrize("name", CASES)
def test_one_testcase_per_total_and_named_component(
    name: str, cases: dict[str, Case], tmp_path: Path
) -> None:
    case = cases[name]
    assert case.result.exit_code == EXIT_CODES[name]
    suite = _read(case.result, case, tmp_path / "check.xml")
    testcases = list(suite)
    names, failures, skipped = _expected(case.result)
    assert {c.name for c in testcases} == names and len(testcases) == len(names)
    assert {c.classname for c in testcases} == {"bootscope.check.kernel_init_s"}
    got_failures = sum(isinstance(r, Failure) for c in testcases for r in c.result)
    got_skipped = sum(isinstance(r, Skipped) for c in testcases for r in c.result)
    assert (got_failures, got_skipped) == (failures, skipped)
    assert (suite.tests, suite.failures, suite.skipped, suite.errors) == (len(names), failures, skipped, 0)
    passed = [c for c in testcases if c.is_passed]
    assert len(passed) == len(names) - failures - skipped


def test_the_demo_cases_cover_every_state(cases: dict[str, Case]) -> None:
    # What the four checks over the demo store hold, so that the counts above test something.
    assert len(cases["regression"].result.regressions) == 14
    assert len(cases["faster"].result.improvements) == 13 and not cases["faster"].result.regressions
    assert len(cases["cannot-tell"].result.cannot_tell) == 32 and cases["cannot-tell"].result.total is None
    passed = cases["pass"].result
    assert not (passed.regressions or passed.improvements or passed.cannot_tell)
    for name in ("undecided", "components-only"):
        total = cases[name].result.total
        assert total is not None and total.verdict == UNKNOWN
    assert len(cases["components-only"].result.regressions) == 6


def test_a_failure_says_shift_interval_p_and_threshold(cases: dict[str, Case], tmp_path: Path) -> None:
    case = cases["regression"]
    by_name = {c.name: c for c in _read(case.result, case, tmp_path / "check.xml")}
    for finding in case.result.regressions:
        (failure,) = by_name[f"{finding.kind} {finding.name}"].result
        assert isinstance(failure, Failure) and failure.text.startswith(f"{finding.kind} {finding.name}: ")
        d = finding.decision
        if d is None:  # new to the reference: its median, and the threshold that made it one
            assert f"median {finding.new_median_s:.4f} s" in failure.message
        else:
            assert d.shift_ci is not None
            assert f"shift {d.shift:+.4f} s" in failure.message
            assert f"[{d.shift_ci[0]:+.4f}, {d.shift_ci[1]:+.4f}]" in failure.message
            assert f"p {d.p_bad:.3g}" in failure.message and f"margin {d.margin:.4f} s" in failure.message
        if finding.q_bad is not None:
            assert f"q {finding.q_bad:.3g}" in failure.message
        assert f"--threshold {THRESHOLD}" in failure.message and failure.message in failure.text


def test_properties_say_what_was_asked(cases: dict[str, Case], tmp_path: Path) -> None:
    case = cases["cannot-tell"]
    suite = _read(case.result, case, tmp_path / "check.xml")
    properties = {p.name: p.value for p in suite.properties()}
    assert properties["reference"] == case.asked.reference
    assert (properties["alpha"], properties["threshold"], properties["min_shift"]) == (
        "0.05",
        THRESHOLD,
        MIN_SHIFT,
    )
    assert properties["method"] == METHOD and properties["exit_code"] == "125"


@pytest.mark.parametrize("hostile", [HOSTILE, "ctl\x00\x1b[31m\x0bend\ufffe"])
def test_hostile_component_names_round_trip(hostile: str, cases: dict[str, Case], tmp_path: Path) -> None:
    result = cases["regression"].result
    slower, faster = result.regressions[1], cases["faster"].result.improvements[1]
    untested = cases["cannot-tell"].result.cannot_tell[0]
    renamed = dataclasses.replace(
        result,
        regressions=(result.regressions[0], dataclasses.replace(slower, name=hostile)),
        improvements=(dataclasses.replace(faster, name=hostile + "2"),),
        cannot_tell=(dataclasses.replace(untested, name=hostile + "3"),),
        not_like_for_like=f"NOT LIKE FOR LIKE: {hostile}",
    )
    path = tmp_path / "check.xml"
    names = {c.name for c in _read(renamed, cases["regression"], path)}
    ET.parse(path)  # well-formed for a plain XML parser too
    # Markup comes back as written; what XML 1.0 cannot hold comes back as a visible \xNN escape.
    shown = hostile.replace("\x00", "\\x00").replace("\x1b", "\\x1b").replace("\x0b", "\\x0b")
    shown = shown.replace("\ufffe", "\\ufffe")
    assert {f"{slower.kind} {shown}", f"{faster.kind} {shown}2", f"{untested.kind} {shown}3"} <= names
    assert "<b>" not in path.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", CASES)
def test_the_cli_exit_code_and_stdout_do_not_change(
    name: str, cases: dict[str, Case], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = cases[name].argv
    for fmt in ("json", "table"):
        capsys.readouterr()
        plain = run_in_process(*argv, "--format", fmt)
        plain_out = capsys.readouterr().out
        junit, markdown = tmp_path / f"{fmt}.xml", tmp_path / f"{fmt}.md"
        junit.write_text("an old file, replaced whole")
        code = run_in_process(*argv, "--format", fmt, "--junit", str(junit), "--markdown", str(markdown))
        assert (code, capsys.readouterr().out) == (plain, plain_out) and code == EXIT_CODES[name]
        assert len(_suite(junit)) == len(_expected(cases[name].result)[0])
        assert markdown.read_text(encoding="utf-8").startswith("**bootscope: ")


def test_an_unwritable_junit_file_is_bad_input(
    cases: dict[str, Case], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_in_process(*cases["pass"].argv, "--junit", str(tmp_path / "no-such-dir" / "check.xml"))
    assert code == 2 and "cannot write" in capsys.readouterr().err
    assert not (tmp_path / "no-such-dir").exists()

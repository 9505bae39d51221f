"""``bootscope check --junit FILE``: the verdict as JUnit XML, as Jenkins and GitLab read it.

One ``<testsuites>`` holding one ``<testsuite name="bootscope check">``; a ``<testcase>`` (classname
``bootscope.check.<metric>``, name ``<kind> <component>``) for the total and for every component
check names (:mod:`check_rows`): slower is a ``<failure>`` (the shift, interval, margin, p and
threshold in its text), cannot tell a ``<skipped>``, faster and not slower a plain pass.
``<properties>`` say what was asked (reference file, alpha, threshold, min shift) and the method.

Names come from kernel logs: the tree is built with ElementTree, which escapes markup in text and
attributes, after :func:`check_rows.printable` has shown what XML 1.0 cannot hold at all (control
characters, lone surrogates), so the file always parses.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

from bootscope.report.check_rows import (
    CANNOT_TELL,
    SLOWER,
    CheckAsked,
    CheckRow,
    check_rows,
    label,
    printable,
    row_sentence,
)

if TYPE_CHECKING:
    from bootscope.usecases.check_rule import CheckResult

SUITE = "bootscope check"
CLASS_PREFIX = "bootscope.check."


def check_junit(result: CheckResult, asked: CheckAsked) -> str:
    """Return the JUnit XML document (text, UTF-8 declaration first, newline-terminated) of
    ``result``: one testcase per row of :func:`check_rows.check_rows`, counts on the suite, what
    was asked and the method as properties, the verdict line and notes as the suite's output."""
    from bootscope.usecases.reference import METHOD

    rows = check_rows(result)
    failures = sum(row.state == SLOWER for row in rows)
    skipped = sum(row.state == CANNOT_TELL for row in rows)
    suites = ET.Element("testsuites", _counts(len(rows), failures, skipped) | {"name": "bootscope"})
    suite = ET.SubElement(suites, "testsuite", {"name": SUITE} | _counts(len(rows), failures, skipped))
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("reference", asked.reference),
        ("metric", result.metric),
        ("alpha", f"{asked.alpha:g}"),
        ("threshold", asked.threshold),
        ("min_shift", asked.min_shift),
        ("method", METHOD),
        ("exit_code", str(result.exit_code)),
    ):
        ET.SubElement(properties, "property", {"name": name, "value": printable(value)})
    classname = printable(CLASS_PREFIX + result.metric)
    for row in rows:
        _testcase(suite, classname, row, asked)
    said = [result.message, *([result.not_like_for_like] if result.not_like_for_like else []), *result.notes]
    ET.SubElement(suite, "system-out").text = "\n".join(printable(line) for line in said)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def _counts(tests: int, failures: int, skipped: int) -> dict[str, str]:
    return {"tests": str(tests), "failures": str(failures), "errors": "0", "skipped": str(skipped)}


def _testcase(suite: ET.Element, classname: str, row: CheckRow, asked: CheckAsked) -> None:
    case = ET.SubElement(suite, "testcase", {"classname": classname, "name": label(row)})
    sentence = row_sentence(row, asked)
    if row.state == SLOWER:
        failure = ET.SubElement(case, "failure", {"message": sentence, "type": "regression"})
        failure.text = "\n".join((f"{label(row)}: {sentence}", *_boots(row)))
    elif row.state == CANNOT_TELL:
        ET.SubElement(case, "skipped", {"message": sentence})


def _boots(row: CheckRow) -> tuple[str, ...]:
    """Return the line that says how many boots the row's test had, or nothing for a component
    new to the reference (its median is in the sentence)."""
    d = row.decision
    return () if d is None else (f"boots: {d.n_baseline} reference, {d.n_candidate} new",)

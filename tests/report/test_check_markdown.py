"""`check --markdown FILE` (bootscope/report/check_markdown.py), rendered by a real CommonMark parser
with GitHub's tables (markdown-it-py): the verdict first, a table of what is slower and one of what is
faster with a row for each thing the result names, the list of what cannot tell, the method, hostile
names shown exactly as written, and text lines within 80 columns."""

from __future__ import annotations

import dataclasses
import html
import re

import pytest
from check_cases import HOSTILE, THRESHOLD, Case, demo_cases
from markdown_it import MarkdownIt

from bootscope.report.check_markdown import check_markdown, md_code, md_text
from bootscope.stats.decision import UNKNOWN
from bootscope.usecases.check_rule import CheckResult

VERDICTS = {
    "regression": "**bootscope: regression** (exit 1): `kernel_init_s` and 13 components slower",
    "faster": "**bootscope: pass** (exit 0): `kernel_init_s` and 12 components faster",
    "pass": "**bootscope: pass** (exit 0): `kernel_init_s` not slower by more than 0.1108 s (6.4%)",
    "cannot-tell": "**bootscope: cannot tell** (exit 125): `kernel_init_s`: 1 new boot(s); a test needs 2",
    "undecided": "**bootscope: cannot tell** (exit 125): `kernel_init_s`: neither proven slower nor proven"
    " within the margin; many more boots are needed",
    "components-only": "**bootscope: regression** (exit 1): 6 components slower",
}
_CELL = re.compile(r"<td[^>]*>(.*?)</td>", re.S)
_CODE = re.compile(r"<code>(.*?)</code>", re.S)


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    return demo_cases(tmp_path_factory.mktemp("check-markdown"))


def _html(text: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(text)


def _section(text: str, title: str) -> str:
    """Return the lines under the heading that starts with ``title``, up to the next heading."""
    start = text.index(f"### {title}")
    end = text.find("\n### ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def _table_rows(section: str) -> list[str]:
    return [line for line in section.splitlines() if line.startswith("| ")][2:]  # less the header


@pytest.mark.parametrize("name", list(VERDICTS))
def test_the_verdict_comes_first(name: str, cases: dict[str, Case]) -> None:
    text = check_markdown(cases[name].result, cases[name].asked)
    assert text.splitlines()[0] == VERDICTS[name]


@pytest.mark.parametrize("name", list(VERDICTS))
def test_a_row_or_item_for_everything_the_result_names(name: str, cases: dict[str, Case]) -> None:
    result = cases[name].result
    text = check_markdown(result, cases[name].asked)
    slower, faster = _section(text, "Slower"), _section(text, "Faster")
    assert len(_table_rows(slower)) == len(result.regressions)
    assert len(_table_rows(faster)) == len(result.improvements)
    for finding in result.regressions:
        assert f"| {finding.kind} | {md_code(finding.name, in_table=True)} |" in slower
    for better in result.improvements:
        assert (
            f"| {better.kind} | {md_code(better.name, in_table=True)} | {better.decision.shift:+.4f} |"
            in faster
        )
    unsure = [line for line in _section(text, "Cannot tell").splitlines() if line.startswith("- ")]
    total_unsure = result.total is None or result.total.verdict == UNKNOWN
    assert len(unsure) == len(result.cannot_tell) + total_unsure
    for untested, line in zip(result.cannot_tell, unsure[total_unsure:], strict=True):
        said = f"in {untested.n_reference} reference and {untested.n_new} new boots"
        assert line.startswith(f"- {untested.kind} {md_code(untested.name)}: {said}")
    # Rendered, every table row has its six cells: no name split a row.
    for cells in (_CELL.findall(row) for row in re.findall(r"<tr>(.*?)</tr>", _html(text), re.S)):
        assert len(cells) in (0, 6)


def test_the_method_says_test_alpha_threshold_and_margin(cases: dict[str, Case]) -> None:
    case = cases["regression"]
    found = case.result.reach
    assert found is not None and found.margin_s > found.threshold_s
    method = _section(check_markdown(case.result, case.asked), "Method")
    flat = " ".join(method.split())
    assert "Mann-Whitney" in flat and "Benjamini-Hochberg" in flat
    assert "alpha 0.05" in flat and f"--threshold {THRESHOLD}" in flat
    assert (
        f"margin {found.margin_s:.4f} s" in flat and f"{found.check_boots} new boots resolve no finer" in flat
    )
    assert f"{found.boots_for_threshold} new boots would resolve it" in flat
    assert f"Reference: `{case.asked.reference}`" in flat


def _renamed(result: CheckResult, faster: CheckResult, untested: CheckResult, name: str) -> CheckResult:
    return dataclasses.replace(
        result,
        regressions=(dataclasses.replace(result.regressions[1], name=name),),
        improvements=(dataclasses.replace(faster.improvements[1], name=name),),
        cannot_tell=(dataclasses.replace(untested.cannot_tell[0], name=name),),
        not_like_for_like=f"NOT LIKE FOR LIKE: {name}",
    )


@pytest.mark.parametrize("hostile", [HOSTILE, "`lead", "trail`", " spaced ", "x``y`z|w\\|v"])
def test_hostile_names_render_as_written(hostile: str, cases: dict[str, Case]) -> None:
    result = _renamed(
        cases["regression"].result, cases["faster"].result, cases["cannot-tell"].result, hostile
    )
    rendered = _html(check_markdown(result, cases["regression"].asked))
    codes = [html.unescape(code) for code in _CODE.findall(rendered)]
    # Once in each table, once in the cannot-tell list: the exact name, never markup.
    assert codes.count(hostile) == 3, codes
    assert "<b>" not in rendered and "<!--" not in rendered and "<em>" not in rendered
    # The like-for-like line is escaped text: it renders as written too.
    assert f"NOT LIKE FOR LIKE: {html.escape(hostile, quote=False)}" in rendered.replace("&quot;", '"')


def test_control_characters_are_shown_not_written() -> None:
    assert md_code("a\x1b[31mb\nc") == "`a\\x1b[31mb\\x0ac`"
    # The escape's own backslash is escaped: it renders as the four characters \x00.
    assert md_text("a\x00<b>") == "a\\\\x00\\<b\\>"
    assert _html(md_text("a\x00<b>")) == "<p>a\\x00&lt;b&gt;</p>\n"


@pytest.mark.parametrize("name", list(VERDICTS))
def test_text_fits_80_columns(name: str, cases: dict[str, Case]) -> None:
    # Table rows and lines naming a component (its name is as long as the log made it) may not.
    text = check_markdown(cases[name].result, cases[name].asked)
    long = [
        line for line in text.splitlines() if len(line) > 80 and not line.startswith("|") and "`" not in line
    ]
    assert long == [], long

"""The glance view's plain-text tables and screen (bootscope.report.text_table, .screen)."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from bootscope.report.screen import Screen
from bootscope.report.text_table import Column, TextTable, cell_width, cut, lay_out, wrap


def _gaps_table(line: str) -> TextTable:
    table = TextTable(
        (Column("at s", right=True), Column("gap s", right=True), Column("phase"), Column("line")),
        title="Largest gaps",
    )
    table.add_row("4.097", "0.160", "userspace", line)
    table.add_row("12.500", "0.010", "initcalls", "short")
    return table


def test_a_table_fits_its_width_by_cutting_the_widest_column() -> None:
    lines = lay_out(_gaps_table("platform platform-framebuffer.0: " * 5), 50)
    assert lines[0] == "Largest gaps"
    assert all(cell_width(line) <= 50 for line in lines)
    assert max(cell_width(line) for line in lines[1:]) == 50  # the room is used, not wasted
    row = lines[4]
    # the numbers stay whole and right-justified under their headers; the long line is cut with "…"
    assert row.startswith("│  4.097 │ 0.160 │ userspace │ platform") and row.endswith("… │")
    assert lines[2].startswith("┃   at s ┃ gap s ┃ phase     ┃ line   ") and lines[2].endswith(" ┃")
    assert lines[1][0] == "┏" and lines[3][0] == "┡" and lines[-1][0] == "└"


def test_a_table_that_fits_keeps_its_natural_widths() -> None:
    lines = lay_out(_gaps_table("short too"), 200)
    assert lines[4] == "│  4.097 │ 0.160 │ userspace │ short too │"


def test_a_folded_grid_cell_wraps_under_its_column() -> None:
    table = TextTable((Column(bold=True), Column(fold=True)), boxed=False, gap=2)
    table.add_row("cmdline", "console=ttyS0 panic=-1 initcall_debug ignore_loglevel " + "x" * 30)
    lines = lay_out(table, 40)
    assert lines == [
        "cmdline  console=ttyS0 panic=-1",
        "         initcall_debug ignore_loglevel",
        "         xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    ]
    styled = lay_out(table, 40, ("<b>", "</b>"))
    assert styled[0].startswith("<b>cmdline</b>  console")
    table.add_row("", "a bold row", bold=True)
    assert lay_out(table, 40, ("<b>", "</b>"))[-1] == "         <b>a bold row</b>"
    assert lay_out(table, 40)[-1] == "         a bold row"


def test_wide_characters_take_two_cells_and_markup_is_text() -> None:
    assert cell_width("日本語") == 6 and cell_width("e\u0301") == 1
    assert cut("日本語テキスト", 7) == "日本語…" and cell_width(cut("日本語テキスト", 7)) == 7
    table = TextTable((Column("name"), Column("n", right=True)))
    table.add_row("[bold red]debian:cloud:[/] 日本", "1")
    lines = lay_out(table, 80)
    assert "│ [bold red]debian:cloud:[/] 日本 │ 1 │" in lines
    assert len({cell_width(line) for line in lines}) == 1  # every line of the box equally wide


def test_a_row_must_fill_every_column() -> None:
    table = TextTable((Column("a"), Column("b")))
    try:
        table.add_row("only one")
    except ValueError as error:
        assert "1 cells" in str(error)
    else:
        raise AssertionError("a short row was accepted")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab cd日\u0301-"), max_size=120), st.integers(1, 60))
def test_wrap_keeps_every_word_and_fits(text: str, width: int) -> None:
    lines = wrap(text, width)
    assert lines
    if cell_width(text) > width:
        # a line is wider than the width only where one character alone is (a wide one at width 1)
        assert all(cell_width(line) <= max(width, 2) for line in lines)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.text(max_size=40), st.text(max_size=90)), min_size=1, max_size=6),
    st.integers(30, 120),
)
def test_any_table_fits_any_reasonable_width(rows: list[tuple[str, str]], width: int) -> None:
    table = TextTable((Column("name"), Column("value", right=True, fold=True)), title="t")
    for name, value in rows:
        table.add_row(name.replace("\n", " "), value.replace("\n", " "))
    assert all(cell_width(line) <= width for line in lay_out(table, width))


def test_screen_styles_only_when_asked_and_rules_span_the_width() -> None:
    plain, styled = io.StringIO(), io.StringIO()
    for stream, ansi in ((plain, False), (styled, True)):
        screen = Screen(stream, 60, ansi=ansi)
        screen.rule("log.txt boot 2 of 3")
        screen.line("kernel 4.097 s to Run /init " * 4, style="bold")
        screen.table(_gaps_table("x"))
    out = plain.getvalue().splitlines()
    assert "\x1b" not in plain.getvalue() and "\x1b[1m" in styled.getvalue()
    assert out[0].startswith("─") and " log.txt boot 2 of 3 " in out[0] and len(out[0]) == 60
    assert all(cell_width(line) <= 60 for line in out)
    assert out[1].startswith("kernel 4.097 s") and len(out) > 3

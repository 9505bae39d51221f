"""Every table fits the terminal (issue 26, point 3): 80 columns in a pipe unless ``COLUMNS`` says
otherwise, ``COLUMNS`` honoured, no line ending in spaces, numbers never cut.

The commands run through the CLI's real entry point over the demo store
(tests/data/golden/demo-6.1-cloud.db: run 1, 15 TCG boots; run 2, 6 cyclictest runs) and the logs
in tests/data. Widths are counted here by a reader of our own (East Asian wide characters 2 cells,
combining marks 0), not by bootscope's ``cell_width``.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from cli_here import run_in_process
from golden_cases import DEMO_DB
from rich.console import Console
from rich.table import Table

from bootscope.report.console import TrimmedLines, output_console
from bootscope.report.rich_fit import drop_to_fit as drop_rich_columns
from bootscope.report.text_table import Column, TextTable, drop_to_fit, lay_out

ROOT = Path(__file__).parent.parent.parent
DATA = ROOT / "tests" / "data"
LATENCY = sorted(str(p.relative_to(ROOT)) for p in (DATA / "latency").iterdir())

# (name, argv); "{db}" is a copy of the demo store.
CASES = [
    ("runs", ("runs", "--db", "{db}")),
    ("latency-analyze", ("latency", "analyze", *LATENCY)),
    ("latency-show", ("latency", "show", "2", "--db", "{db}")),
    ("latency-show-threads", ("latency", "show", "2", "--db", "{db}", "--threads")),
    ("analyze", ("analyze", "tests/data/debian-6.1-cloud-initcall-smp1.log")),
    ("analyze-verbose", ("analyze", "--verbose", "tests/data/debian-6.1-cloud-initcall-smp1.log")),
    ("analyze-systemd", ("analyze", "tests/data/systemd-252-collector-tcg.txt")),
    ("analyze-run", ("analyze", "--run", "1", "--boot", "2", "--db", "{db}", "--verbose")),
    ("compare", ("compare", "1", "--db", "{db}")),
    ("diff", ("diff", "1", "--baseline", "smp1", "--variant", "smp2", "--db", "{db}")),
    ("diff-ic", ("diff", "1", "--baseline", "smp1", "--variant", "ic", "--db", "{db}")),
    ("check", ("check", "1:smp1", "--against", "{ref}", "--db", "{db}")),
    ("fleet-summary", ("fleet", "summary", "--db", "{fleet}")),
    ("fleet-summary-by", ("fleet", "summary", "--db", "{fleet}", "--by", "arch,kernel_series")),
    ("fleet-outliers", ("fleet", "outliers", "--db", "{fleet}")),
]


def _cells(line: str) -> int:
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line
    )


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    db = tmp_path_factory.mktemp("widths") / "demo.db"
    shutil.copyfile(DEMO_DB, db)
    return str(db)


@pytest.fixture(scope="module")
def stores(demo_db: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The demo store, a reference saved from its smp1 boots, and a fleet store of tests/data/hw."""
    where = tmp_path_factory.mktemp("widths-stores")
    ref, fleet = str(where / "ref.json"), str(where / "fleet.db")
    assert run_in_process("baseline", "save", "1:smp1", "-o", ref, "--db", demo_db) == 0
    assert run_in_process("fleet", "import", str(DATA / "hw"), "--db", fleet, "-j", "1") == 0
    return {"db": demo_db, "ref": ref, "fleet": fleet}


def _stdout(
    argv: tuple[str, ...],
    columns: int,
    db: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> str:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", str(columns))
    capsys.readouterr()
    code = run_in_process(*(a.format(db=db) for a in argv))
    out = capsys.readouterr().out
    assert code == 0, out
    return out


@pytest.mark.parametrize(("name", "argv"), CASES, ids=[name for name, _ in CASES])
@pytest.mark.parametrize("columns", [80, 60])
def test_every_line_fits_and_none_ends_in_a_space(
    name: str,
    argv: tuple[str, ...],
    columns: int,
    demo_db: str,
    stores: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = _stdout(
        tuple(a.format(**stores) for a in argv), columns, demo_db, monkeypatch, capsys
    ).splitlines()
    assert lines, name
    too_wide = [line for line in lines if _cells(line) > columns]
    assert not too_wide, f"{name}: {len(too_wide)} lines over {columns} cells, first: {too_wide[0]!r}"
    padded = [line for line in lines if line != line.rstrip()]
    assert not padded, f"{name}: lines end in spaces, first: {padded[0]!r}"


def test_a_wider_columns_is_honoured(
    demo_db: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the runs table of the demo store, read off by hand: 8 columns, the longest row
    # "│  1 │ 2026-11-25 16:32:21 │ complete │ tcg   │ smp1, smp2, ic │ 15 │      0 │     15 │" is 74
    # cells plus the width of nothing else: it fits 120 whole, one line per run
    wide = _stdout(("runs", "--db", "{db}"), 120, demo_db, monkeypatch, capsys).splitlines()
    assert any(
        "│  1 │ 2026-11-25 16:32:21 │ complete │ tcg   │ smp1, smp2, ic │ 15 │" in line for line in wide
    )
    assert not any("left out" in line for line in wide)
    narrow = _stdout(("runs", "--db", "{db}"), 60, demo_db, monkeypatch, capsys)
    assert "stored" not in narrow.split("left out")[0] and "left out to fit 60 columns: stored" in narrow
    # latency analyze at 120: the legend's second line (104 cells) stays one line
    legend = _stdout(("latency", "analyze", *LATENCY), 120, demo_db, monkeypatch, capsys).splitlines()
    assert max(_cells(line) for line in legend) > 80
    assert all(_cells(line) <= 120 for line in legend)


def test_a_pipe_without_columns_is_80_wide(demo_db: str) -> None:
    env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES")}
    done = subprocess.run(
        [sys.executable, "-m", "bootscope", "runs", "--db", demo_db],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    widths = [_cells(line) for line in done.stdout.splitlines()]
    # the table's natural width is 7 cells more than 80 (the title, a pytest path, wider still):
    # fitted, its rules are exactly 80 cells
    assert max(widths) == 80, done.stdout


def test_latency_quantiles_keep_whole_numbers_when_narrow(
    demo_db: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # cyclictest-h200-q.txt, thread 0, read off the file: 9946 cycles, max 1068 us, 35 samples in the
    # overflow of a 200 us histogram, so p99.9 (9.9 samples from the top) is in the overflow
    out = _stdout(
        ("latency", "analyze", "tests/data/latency/cyclictest-h200-q.txt"), 40, demo_db, monkeypatch, capsys
    )
    t0 = next(line for line in out.splitlines() if line.startswith("T0 "))
    assert t0.split()[:2] == ["T0", "9946"] and "1068" in t0.split() and ">200" in t0.split()
    assert "left out to fit 40 columns: cpu" in " ".join(out.split())


def test_trimmed_lines_drop_only_the_spaces_that_end_a_line() -> None:
    sink = io.StringIO()
    stream = TrimmedLines(sink)
    stream.write("a  b   \nc  ")
    assert sink.getvalue() == "a  b\nc"  # the spaces after c are held back
    stream.write("d \x1b[1mbold  \x1b[0m\n  ")
    stream.write("\n")
    assert sink.getvalue() == "a  b\nc  d \x1b[1mbold\x1b[0m\n\n"


def test_output_console_pads_no_grid_cell(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "50")
    console = output_console()
    assert console.width == 50
    grid = Table.grid(padding=(0, 2))
    grid.add_column()
    grid.add_column()
    grid.add_row("a long first cell", "x")
    grid.add_row("b", "y")
    console.print(grid)
    assert capsys.readouterr().out == "a long first cell  x\nb                  y\n"


def test_text_table_leaves_out_columns_before_cutting_a_number() -> None:
    table = TextTable(
        (Column("name"), Column("cpu", right=True), Column("cycles", right=True), Column("max", right=True)),
        boxed=False,
    )
    table.add_row("name", "cpu", "cycles", "max")
    table.add_row("IRQ-000", "0", "600002", "16")
    # natural: 7 + 3 + 6 + 3 and 3 gaps of 2 = 25 cells
    assert drop_to_fit(table, 25, ("cpu",))[1] == ()
    fitted, dropped = drop_to_fit(table, 20, ("cpu", "max"))
    assert dropped == ("cpu",)  # 7 + 6 + 3 + 4 = 20
    assert lay_out(fitted, 20) == ["name     cycles  max", "IRQ-000  600002   16"]
    fitted, dropped = drop_to_fit(table, 14, ("cpu", "max"))
    assert dropped == ("cpu", "max") and lay_out(fitted, 14)[1] == "IRQ-0…  600002"  # 6 + 2 + 6


def test_rich_table_leaves_out_columns_and_says_so() -> None:
    table = Table(title="t")
    for header in ("id", "accel", "variants"):
        table.add_column(header, no_wrap=header == "id")
    table.add_row("1", "tcg", "smp1, smp2")
    # narrowest: "id" 2, "accel" 5, "variants" 8, each with 2 of padding, and 4 borders = 25
    assert drop_rich_columns(table, 25, ("accel",)) == ()
    assert drop_rich_columns(table, 24, ("accel",)) == ("accel",)
    out = io.StringIO()
    Console(file=out, width=24).print(table)
    assert "accel" not in out.getvalue().split("left out")[0]
    assert "left out to fit 24 columns: accel" in " ".join(out.getvalue().split())

"""`report --run` on the demo store: the boot asked for, each variant's QEMU command line, the Holm
adjustment said, interval whiskers in the waterfall, and only the definitions of metrics shown.

Expected values are read from the SQLite file with plain SQL, not through bootscope's store.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[1] / "data" / "golden" / "demo-6.1-cloud.db"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bootscope", *args], capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("demo") / "demo.db"
    shutil.copy(DEMO, copy)
    return copy


@pytest.fixture(scope="module")
def page(demo: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("page") / "run.html"
    done = _cli("report", "--run", "1", "--db", str(demo), "--boot", "3", "-o", str(out))
    assert done.returncode == 0, done.stderr
    return out.read_text()


def _sql(db: Path, query: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as connection:
        return connection.execute(query).fetchall()


def test_the_boot_asked_for_is_the_example(demo: Path, page: str) -> None:
    ((variant,),) = _sql(
        demo,
        "select v.name from boots b join variants v on v.id = b.variant"
        ' where b.experiment = 1 and b."index" = 3',
    )
    assert f"Example boot: run 1 boot 3 ({variant})" in page


def test_a_boot_not_in_the_run_is_refused(demo: Path, tmp_path: Path) -> None:
    done = _cli("report", "--run", "1", "--db", str(demo), "--boot", "99", "-o", str(tmp_path / "x.html"))
    assert done.returncode == 2
    assert done.stderr.strip() == "bootscope: error: --boot 99: run 1 has no such boot; its boots are 1-15"
    assert not (tmp_path / "x.html").exists()


def test_each_variant_shows_its_own_qemu_command_line(demo: Path, page: str) -> None:
    rows = _sql(
        demo,
        "select v.name, b.qemu_command from boots b join variants v on v.id = b.variant "
        'where b.experiment = 1 order by b."index"',
    )
    first: dict[str, str] = {}
    for name, command in rows:
        first.setdefault(str(name), " ".join(json.loads(str(command))))
    assert len(set(first.values())) == 3  # smp=1, smp=2 and initcall_debug differ
    for name, line in first.items():
        assert f"<td>QEMU command line ({name})</td><td>{html.escape(line)}</td>" in page


def test_the_holm_adjustment_is_said(page: str) -> None:
    table = page[
        page.index("<h2>Comparison</h2>") : page.index("</section>", page.index("<h2>Comparison</h2>"))
    ]
    # two variants compared with smp1 for each metric: every p is adjusted and marked
    cells = re.findall(r"<td>([0-9.e-]+) \*</td>", table)
    assert len(cells) == table.count("<tr>") - 1 > 0
    assert "p adjusted for multiple comparisons (Holm correction over 2 comparisons" in table


def test_the_waterfall_draws_intervals(page: str) -> None:
    svg = page[
        page.index('<svg class="waterfall"') : page.index("</svg>", page.index('<svg class="waterfall"'))
    ]
    bars = re.findall(r"<title>(phase [^:<]+|total [^:<]+): ([+-][0-9.]+) s</title>", svg)
    whiskers = re.findall(r"<title>interval ([+-][0-9.]+) to ([+-][0-9.]+) s</title>", svg)
    assert bars and len(whiskers) == len(bars)
    for (_name, shift), (low, high) in zip(bars, whiskers, strict=True):
        assert float(low) <= float(shift) <= float(high)


def test_only_the_definitions_of_metrics_the_run_has(demo: Path, page: str) -> None:
    stored = {
        str(name)
        for (name,) in _sql(
            demo,
            "select distinct s.metric from samples s join boots b on b.id = s.boot where b.experiment = 1",
        )
    }
    shown = page[page.index("<h2>Metric definitions</h2>") :]
    defined = set(re.findall(r"<dt>([^<]+)</dt>", shown))
    # the four metrics the boots carry (kernel_init_s, userspace_s, host_wall_s, host_kernel_start_s),
    # not the 17 bootscope knows
    assert defined == stored and len(stored) == 4

"""Text from users, kernels and logs is printed literally: never read as rich markup or emoji.

``debian:cloud`` once printed as ``debian☁`` (rich's ``:cloud:`` emoji code), and a log line holding
``[bold red]`` would have been read as markup.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from bootscope.lab.plans.schedule import Slot
from bootscope.lab.progress import RichReporter
from bootscope.store import Store
from bootscope.store.records import VariantRecord

HOSTILE = ("debian:cloud", "[bold red]x[/]", ":smile:")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bootscope", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )


def _assert_literal(text: str) -> None:
    for hostile in HOSTILE:
        assert hostile in text, (hostile, text)
    assert "☁" not in text and "😄" not in text


def test_log_lines_kernel_release_and_run_names_print_literally(data_dir: Path, tmp_path: Path) -> None:
    # a real log, with hostile text in the kernel's release, a line that ends the largest gap, and
    # the file name (the run's title)
    lines = (data_dir / "debian-6.1-cloud-smp2.log").read_text().splitlines()
    lines = [
        line.replace("6.1.0-56-cloud-amd64", "6.1.0-debian:cloud-[bold]x[/]-:smile:", 1)
        if "Linux version" in line
        else line
        for line in lines
    ]
    lines.append("[    9.000000] debian:cloud [bold red]x[/] :smile:")
    folder = tmp_path / "debian:cloud [bold red]x["  # so that the path reads ".../[bold red]x[/] :smile:.log"
    folder.mkdir()
    log = folder / "] :smile:.log"
    log.write_text("\n".join(lines) + "\n")
    for extra in ((), ("--verbose",)):
        done = _cli("analyze", str(log), "--top", "20", *extra)
        assert done.returncode == 0, done.stderr
        _assert_literal(done.stdout)
        assert "6.1.0-debian:cloud-[bold]x[/]-:smile:" in done.stdout


def test_variant_names_and_notes_print_literally(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    with Store.open(str(db)) as store:
        store.create_experiment(
            plan={},
            seed=1,
            accel="tcg",
            accel_reason="test",
            host={},
            variants=[VariantRecord(name) for name in HOSTILE],
        )
    listing = _cli("runs", "--db", str(db))
    assert listing.returncode == 0, listing.stderr
    _assert_literal(listing.stdout)

    out = io.StringIO()
    reporter = RichReporter(Console(file=out, width=200, emoji=False, highlight=False))
    reporter.started(1, 3, 0)
    for index, name in enumerate(HOSTILE, start=1):
        reporter.boot_started(Slot(index, name, False, 1))
        reporter.note(f"note about {name}")
    reporter.finished()
    _assert_literal(out.getvalue())


def test_the_reporter_default_console_has_no_emoji() -> None:
    reporter = RichReporter()
    assert reporter._console._emoji is False  # the console it builds for stderr

"""`report`, `trace` and `plot` from the command line, on real logs and a stored run."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_here import run_in_process
from images import assert_png_drawn, lines_labelled, record_figures

LOG = Path(__file__).resolve().parents[1] / "data" / "debian-6.1-cloud-initcall-smp4.log"
LOG1 = Path(__file__).resolve().parents[1] / "data" / "debian-6.1-cloud-initcall-smp1.log"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bootscope", *args], capture_output=True, text=True, timeout=300
    )


def _run_init_s(log: Path) -> float:
    """kernel_init_s read off the log by hand: the time stamp of its `Run /init as init process`."""
    (stamp,) = re.findall(r"\[\s*(\d+\.\d+)\] Run /init as init process", log.read_text(errors="replace"))
    return float(stamp)


def test_report_trace_and_plot_from_a_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    html, trace, png = tmp_path / "r.html", tmp_path / "t.json", tmp_path / "g.png"
    done = _cli("report", str(LOG), "--vs", str(LOG1), "-o", str(html))
    assert done.returncode == 0, done.stderr
    page = html.read_text()
    assert "debian-6.1-cloud-initcall-smp4.log vs debian-6.1-cloud-initcall-smp1.log" in page
    assert _cli("trace", str(LOG), "-o", str(trace)).returncode == 0
    events = json.loads(trace.read_text())["traceEvents"]
    assert sum(1 for e in events if e.get("cat") == "initcall") == 575
    # Drawn in this process, so that the picture can be read: one step per log, at its kernel_init_s.
    saved = record_figures(monkeypatch)
    code = run_in_process("plot", str(LOG), str(LOG1), "--kind", "ecdf", "-o", str(png))
    assert code == 0, capsys.readouterr().err
    assert_png_drawn(png)
    (figure,) = saved
    steps = {label: (list(x), list(y)) for label, x, y in lines_labelled(figure.axes[0])}
    assert steps == {f"{log.name} (n=1)": ([_run_init_s(log)], [1.0]) for log in (LOG, LOG1)}


def test_run_report_and_trace_from_the_store(tmp_path: Path, stored_run: Path) -> None:
    html, trace = tmp_path / "run.html", tmp_path / "b.json"
    done = _cli("report", "--run", "latest", "--db", str(stored_run), "-o", str(html))
    assert done.returncode == 0, done.stderr
    page = html.read_text()
    assert "no marker after 120 s &lt;b&gt;" in page and "test &lt;host&gt;" in page
    assert "slower" in page  # smp4 boots are slower than smp1 by construction
    done = _cli("trace", "--run", "latest", "--boot", "1", "--db", str(stored_run), "-o", str(trace))
    assert done.returncode == 0, done.stderr
    assert '"run 1 boot 1 (smp4): initcalls"' in trace.read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("report",), "give a log file or --run ID"),
        (("report", str(LOG), "--boot", "3"), "--boot 3: the input has 1 boot(s)"),
        (("plot", str(LOG), "-o", "x.jpg"), "choose a .png or .svg"),
        (("trace", "/nonexistent.log"), "nonexistent"),
    ],
)
def test_bad_input_is_one_line(args: tuple[str, ...], message: str) -> None:
    done = _cli(*args)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr


def test_format_is_the_output_format_input_format_the_log(tmp_path: Path) -> None:
    trace = tmp_path / "t.json"
    done = _cli("trace", str(LOG), "--input-format", "dmesg", "--format", "json", "-o", str(trace))
    assert done.returncode == 0 and "deprecat" not in done.stderr and "next release" not in done.stderr
    assert json.loads(trace.read_text())["traceEvents"]
    old = _cli("trace", str(LOG), "--format", "dmesg", "-o", str(tmp_path / "old.json"))  # old spelling
    assert old.returncode == 0 and "use --input-format dmesg" in old.stderr
    assert json.loads((tmp_path / "old.json").read_text()) == json.loads(trace.read_text())
    wrong = _cli("report", str(LOG), "--format", "pdf", "-o", str(tmp_path / "r.html"))
    assert wrong.returncode == 2 and "--format pdf: choose an output format (html)" in wrong.stderr
    clash = _cli("plot", str(LOG), "--format", "svg", "-o", str(tmp_path / "p.png"))
    assert clash.returncode == 2 and "disagree" in clash.stderr

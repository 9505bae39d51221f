"""Report benchmark: a 100 000-line boot log -> HTML report; generation time, file size, and the time
until headless chromium has drawn the page (target < 5 s). Medians of a few runs.

Run: ``.venv/bin/python -m bench.report_bench [--runs N]``. The log is the real smp4 boot of
tests/data with its initcall section repeated, re-timed so the clock keeps rising.
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from pathlib import Path

from bootscope.metrics import DEFINITIONS
from bootscope.report.html import render_boot_report
from bootscope.usecases.views import boots_from_logs

SOURCE = Path(__file__).resolve().parents[1] / "tests" / "data" / "debian-6.1-cloud-initcall-smp4.log"
STAMP = re.compile(r"^\[\s*(\d+\.\d+)\] (.*)$")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def make_log(target_lines: int) -> list[str]:
    """Return a dmesg-style log of about ``target_lines`` lines built from the real smp4 boot."""
    lines = SOURCE.read_text(encoding="utf-8", errors="replace").splitlines()
    first = next(i for i, line in enumerate(lines) if "calling  " in line and "@ 1" in line)
    last = max(i for i, line in enumerate(lines) if line.startswith("[") and "initcall " in line)
    head, body, tail = lines[:first], lines[first : last + 1], lines[last + 1 :]
    parsed = [(float(m.group(1)), m.group(2)) for m in map(STAMP.match, body) if m]
    span_s = parsed[-1][0] - parsed[0][0]
    out = list(head)
    shift_s = 0.0
    while len(out) + len(tail) < target_lines:
        out += [f"[{t + shift_s:12.6f}] {text}" for t, text in parsed]
        shift_s += span_s + 0.001
    for line in tail:
        m = STAMP.match(line)
        out.append(f"[{float(m.group(1)) + shift_s:12.6f}] {m.group(2)}" if m else line)
    return out[: target_lines - len(tail)] + out[-len(tail) :] if len(out) > target_lines else out


def page_seconds(path: Path, runs: int) -> list[float]:
    """Return, per run, the seconds from navigation start until report.js marked the page drawn."""
    from playwright.sync_api import sync_playwright

    times: list[float] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for _ in range(runs):
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            start = time.perf_counter()
            page.goto(path.resolve().as_uri(), timeout=120_000)
            page.wait_for_selector("body[data-rendered=yes]", timeout=120_000)
            page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
            times.append(time.perf_counter() - start)
            page.close()
        browser.close()
    return times


def main(argv: list[str] | None = None) -> None:
    """Run the report benchmark and print its numbers (seconds, bytes)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "big.log"
        log.write_text("\n".join(make_log(args.lines)) + "\n", encoding="utf-8")
        out = Path(tmp) / "big.html"
        gen: list[float] = []
        analyze: list[float] = []
        for _ in range(args.runs):
            start = time.perf_counter()
            view = boots_from_logs([log])[0]
            mid = time.perf_counter()
            out.write_text(render_boot_report(view, definitions=DEFINITIONS), encoding="utf-8")
            gen.append(time.perf_counter() - mid)
            analyze.append(mid - start)
        size_mb = out.stat().st_size / 1e6
        browser = page_seconds(out, args.runs)
    print(f"report bench: {len(view.lines)} lines, {view.breakdown.initcalls.count} initcalls")
    print(f"  read+parse+analyze: median {statistics.median(analyze):.2f} s")
    print(f"  render HTML:        median {statistics.median(gen):.2f} s")
    print(f"  file size:          {size_mb:.1f} MB")
    each = ", ".join(f"{t:.2f}" for t in browser)
    print(f"  chromium drawn:     median {statistics.median(browser):.2f} s ({each})")


if __name__ == "__main__":
    main()

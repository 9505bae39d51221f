"""Benchmark of `bootscope analyze --json` on a ~200 MB multi-boot log built from tests/data.

Run: .venv/bin/python -m bench.analyze_bench [--mb 200] [--runs 3] [--peer-runs 9] [--baseline DIR]
[--corpus qemu|hw|both] [--write-results]
The QEMU corpus is the console logs of tests/data; the real-hardware one the console and dmesg
logs of tests/data/hw (arm32, arm64, riscv64, x86; serial captures with boot-loader lines), both repeated
to ``--mb``; with ``both`` their runs alternate so that both see the same load.
Prints throughput (MB/s of input, wall and CPU) and peak RSS of the child process (median of runs),
and with ``--baseline DIR`` the same for the ``bootscope`` package in DIR (for example an export of
the last commit: ``git archive HEAD bootscope | tar -x -C DIR``), its runs interleaved with ours so
that both see the same load;
then times Debian's linux-source-6.1 scripts/bootgraph.pl and tools/power/pm-graph/bootgraph.py
against `bootscope analyze` on one initcall_debug log and compares their initcall durations.
The kernel source is installed with apt-get if missing; the two scripts are extracted to a
temporary directory, never into the repository.
"""

from __future__ import annotations

import argparse
import compileall
import html
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
LOGS = (
    "debian-6.1-cloud-smp2.log",
    "debian-6.1-cloud-initcall-smp1.log",
    "debian-6.1-cloud-initcall-smp4.log",
)


# journalctl/syslog excerpts and dmesg -T logs are left out: a log is one format, and this corpus is
# console/dmesg
HW_LOGS = tuple(
    sorted(
        p.name for p in (DATA / "hw").glob("*.log") if "journalctl" not in p.name and "dmesg-T" not in p.name
    )
)
CORPORA = {"qemu": [DATA / name for name in LOGS], "hw": [DATA / "hw" / name for name in HW_LOGS]}


def build_log(path: Path, size_mb: int, corpus: str = "qemu") -> int:
    """Write one corpus' real logs back to back until ``size_mb`` MiB; return the size in bytes."""
    parts = [part.read_bytes() for part in CORPORA[corpus]]
    written = 0
    with path.open("wb") as out:
        while written < size_mb * 1024 * 1024:
            for part in parts:
                out.write(part)
                written += len(part)
    return written


def run_once(
    path: Path, command: list[str] | None = None, cwd: str | None = None
) -> tuple[float, float, int]:
    """Return (wall s, CPU s, peak RSS KiB) of one child (default `bootscope analyze --json path`)."""
    start = time.perf_counter()
    child = subprocess.Popen(
        command or [sys.executable, "-m", "bootscope", "analyze", "--json", str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=cwd,
    )
    # wait4 gives this child's own usage (RUSAGE_CHILDREN's peak RSS is the largest of all children)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise subprocess.CalledProcessError(child.returncode, child.args)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def main(argv: list[str] | None = None) -> dict[str, float]:
    """Run the benchmark, print and return its medians."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--peer-runs", type=int, default=9)
    parser.add_argument("--baseline", type=Path, help="a directory holding another bootscope package")
    parser.add_argument("--corpus", choices=("qemu", "hw", "both"), default="both")
    parser.add_argument("--write-results", action="store_true", help="replace RESULTS.md's section")
    args = parser.parse_args(argv)
    names = ["qemu", "hw"] if args.corpus == "both" else [args.corpus]
    # Byte-compile both packages first: where PYTHONDONTWRITEBYTECODE is set, each run would
    # otherwise compile every module it imports again (scripts/setup.sh does it for ours).
    for package in [
        Path(__file__).resolve().parents[1] / "bootscope",
        *([args.baseline / "bootscope"] if args.baseline else []),
    ]:
        compileall.compile_dir(str(package), quiet=1)
    load_before = os.getloadavg()[0]
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        paths = {name: Path(tmp) / f"{name}.log" for name in names}
        sizes = {name: build_log(paths[name], args.mb, name) for name in names}
        runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name in names}
        base: list[tuple[float, float, int]] = []
        for _ in range(args.runs):
            for name in names:
                if args.baseline is not None:
                    # `python -m` puts the working directory first on sys.path: DIR's package wins
                    base.append(run_once(paths[name], cwd=str(args.baseline.resolve())))
                runs[name].append(run_once(paths[name]))
    for name in names:
        results[name] = _summary(sizes[name], runs[name])
        for key, value in results[name].items():
            print(f"analyze {name} {key}: {value:.2f}")
    load_after = os.getloadavg()[0]
    print(f"load average (1 min): {load_before:.2f} before, {load_after:.2f} after")
    if base:
        for key, value in _summary(sum(sizes.values()) * args.runs // len(base), base).items():
            print(f"baseline {key}: {value:.2f}")
    if args.write_results:
        _write(results, args.runs, load_before, load_after)
    if args.peer_runs:
        startup(args.peer_runs * 3, args.baseline)
        peers(args.peer_runs)
    return results[names[0]]


SMALL_LOG = DATA / "debian-6.1-cloud-smp2.log"  # one whole boot, 374 lines, 26 kB


def startup(runs: int, baseline: Path | None) -> None:
    """Print median wall and CPU time of `bootscope --help` and of `bootscope analyze` (table and
    JSON) on SMALL_LOG: start-up included, as a user meets it; with ``baseline`` its package too,
    its runs interleaved with ours."""
    commands = {
        "--help": ["--help"],
        "analyze small.log": ["analyze", str(SMALL_LOG)],
        "analyze --json small.log": ["analyze", "--json", str(SMALL_LOG)],
    }
    where = {"this tree": None, **({"baseline": str(baseline.resolve())} if baseline is not None else {})}
    times: dict[tuple[str, str], list[tuple[float, float, int]]] = {}
    for _ in range(runs):
        for label, args in commands.items():
            for name, cwd in where.items():
                command = [sys.executable, "-m", "bootscope", *args]
                times.setdefault((label, name), []).append(run_once(SMALL_LOG, command, cwd))
    for (label, name), found in times.items():
        wall = statistics.median(t[0] for t in found)
        cpu = statistics.median(t[1] for t in found)
        print(f"start-up {label} ({name}): wall {wall:.3f} s, cpu {cpu:.3f} s (median of {runs})")


def _write(results: dict[str, dict[str, float]], runs: int, load_before: float, load_after: float) -> None:
    from bench.results import write_section

    rows = "\n".join(
        f"| {name} | {r['input_mb']:.0f} MB | {r['mb_per_s_cpu']:.1f} MB/s ({r['cpu_s']:.2f} s) |"
        f" {r['mb_per_s_wall']:.1f} MB/s ({r['wall_s']:.2f} s) | {r['peak_rss_mb']:.0f} MB |"
        for name, r in results.items()
    )
    write_section(
        "analyze, QEMU and real-hardware corpora",
        "## analyze, QEMU and real-hardware corpora\n\n"
        f"`.venv/bin/python -m bench.analyze_bench --corpus both --runs {runs} --write-results`"
        f" ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {load_before:.2f} before,"
        f" {load_after:.2f} after; medians of {runs} runs, the two corpora alternating; CPU = user + sys"
        " of the child, os.wait4, because the machine is shared):\n\n"
        "| corpus | input | throughput, CPU | throughput, wall | peak RSS |\n"
        "| --- | --- | --- | --- | --- |\n"
        f"{rows}\n",
    )


def _summary(size: int, runs: list[tuple[float, float, int]]) -> dict[str, float]:
    result = {
        "input_mb": size / 1e6,
        "wall_s": statistics.median(r[0] for r in runs),
        "cpu_s": statistics.median(r[1] for r in runs),
        "peak_rss_mb": max(r[2] for r in runs) / 1024,
    }
    result["mb_per_s_wall"] = result["input_mb"] / result["wall_s"]
    result["mb_per_s_cpu"] = result["input_mb"] / result["cpu_s"]
    return result


PEER_LOG = DATA / "debian-6.1-cloud-initcall-smp4.log"
KERNEL_TARBALL = Path("/usr/src/linux-source-6.1.tar.xz")
_PEER_FILES = ("linux-source-6.1/scripts/bootgraph.pl", "linux-source-6.1/tools/power/pm-graph/")


def extract_peers(into: Path) -> Path:
    """Install linux-source-6.1 if needed, extract the two bootgraph scripts; return the tree root."""
    if not KERNEL_TARBALL.exists():
        subprocess.run(["apt-get", "install", "-y", "linux-source-6.1"], check=True)
    subprocess.run(["tar", "-xf", str(KERNEL_TARBALL), "-C", str(into), *_PEER_FILES], check=True)
    return into / "linux-source-6.1"


def _median_runs(command: list[str], runs: int, cwd: str | None = None) -> tuple[float, float]:
    times = [run_once(PEER_LOG, command, cwd) for _ in range(runs)]
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)


def peers(runs: int) -> None:
    """Time bootgraph.pl, bootgraph.py and bootscope on PEER_LOG (medians); compare initcall durations."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = extract_peers(Path(tmp))
        work = Path(tmp) / "out"
        work.mkdir()
        pl = tree / "scripts" / "bootgraph.pl"
        py = tree / "tools" / "power" / "pm-graph" / "bootgraph.py"
        perl = ["sh", "-c", f"perl {pl} < {PEER_LOG} > {work / 'bootgraph.svg'}"]
        pm_graph = ["python3", str(py), "-dmesg", str(PEER_LOG)]  # writes bootgraph.html in its cwd
        ours = [sys.executable, "-m", "bootscope", "analyze", "--json", str(PEER_LOG)]
        timings = {
            "bootgraph.pl": _median_runs(perl, runs, str(work)),
            "bootgraph.py": _median_runs(pm_graph, runs, str(work)),
            "bootscope": _median_runs(ours, runs),
        }
        for name, (wall, cpu) in timings.items():
            ratio = wall / timings["bootscope"][0]
            print(f"peer {name}: wall {wall:.3f} s, cpu {cpu:.3f} s, wall / bootscope {ratio:.2f}")
        fifty_logs(py, runs=max(1, runs // 3))
        ours_us = _bootscope_durations_us()
        svg = (work / "bootgraph.svg").read_text()
        page = (work / "bootgraph.html").read_text()
        _compare_pl(svg, ours_us)
        _compare_py(page, ours_us)
        shutil.rmtree(work, ignore_errors=True)


FIFTY = 50


def fifty_logs(bootgraph_py: Path, runs: int) -> None:
    """Time bootgraph.py over 50 real logs (one run per log: it reads one dmesg) against one
    ``bootscope analyze --json`` of the same 50 logs; print medians of ``runs`` and their ratio.

    The logs are the timed ones of both corpora (tests/data and tests/data/hw), cycled to 50 files.
    """
    timed = [p for p in CORPORA["qemu"] + CORPORA["hw"] if "untimed" not in p.name]
    with tempfile.TemporaryDirectory() as tmp:
        logs = []
        for index in range(FIFTY):
            source = timed[index % len(timed)]
            logs.append(Path(tmp) / f"{index:02d}-{source.name}")
            logs[-1].write_bytes(source.read_bytes())
        theirs: list[float] = []
        ours: list[float] = []
        for _ in range(runs):
            start = time.perf_counter()
            for log in logs:  # writes bootgraph.html in its working directory
                subprocess.run(
                    ["python3", str(bootgraph_py), "-dmesg", str(log)], cwd=tmp, capture_output=True
                )
            theirs.append(time.perf_counter() - start)
            command = [sys.executable, "-m", "bootscope", "analyze", "--json", *map(str, logs)]
            ours.append(run_once(logs[0], command)[0])
        size_mb = sum(log.stat().st_size for log in logs) / 1e6
    t, o = statistics.median(theirs), statistics.median(ours)
    print(
        f"50 logs ({size_mb:.1f} MB): bootgraph.py, one run per log, {t:.2f} s wall; bootscope analyze"
        f" --json, one run for all, {o:.3f} s wall; ratio {t / o:.1f}x (medians of {runs})"
    )


def _bootscope_durations_us() -> dict[str, int]:
    done = subprocess.run(
        [sys.executable, "-m", "bootscope", "analyze", "--json", "--top", "100000", str(PEER_LOG)],
        capture_output=True,
        text=True,
        check=True,
    )
    calls = json.loads(done.stdout)["boots"][0]["initcalls"]["top"]
    return {call["name"]: call["duration_us"] for call in calls}


def _compare_pl(svg: str, ours_us: dict[str, int]) -> None:
    # bootgraph.pl draws a bar per initcall of at least 1/1200 of the boot, width = (end - start of
    # the printk stamps) * 1950 / boot span: widths are durations on one unknown scale.
    bars = re.findall(
        r'<rect x="[^"]*" width="([^"]*)" y="[^"]*" height="145"[^>]*/>\n<text[^>]*>([^<]*)</text>', svg
    )
    pairs = [(float(width), ours_us[name]) for width, name in bars if ours_us.get(name)]
    scales = [width / us for width, us in pairs]
    scale = statistics.median(scales)
    off = [abs(width / scale - us) / us for width, us in pairs]
    print(
        f"peer bootgraph.pl: {len(bars)} bars, {len(pairs)} matched by name; width/duration median"
        f" {scale:.6g}; |relative difference| median {statistics.median(off):.3%}, max {max(off):.3%}"
    )


def _compare_py(page: str, ours_us: dict[str, int]) -> None:
    found = re.findall(r'title="([^" ]+) \(([0-9.]+) ms\)', page)
    pairs = [
        (float(ms) * 1000, ours_us[html.unescape(name)])
        for name, ms in found
        if html.unescape(name) in ours_us
    ]
    diff_us = [abs(theirs - us) for theirs, us in pairs]
    big = [(theirs, us) for theirs, us in pairs if us >= 1000]
    rel = [abs(theirs - us) / us for theirs, us in big]
    print(
        f"peer bootgraph.py: {len(found)} initcalls, {len(pairs)} matched by name; |difference| median"
        f" {statistics.median(diff_us):.1f} us, max {max(diff_us):.1f} us; calls >= 1 ms: {len(big)},"
        f" |relative difference| median {statistics.median(rel):.3%}, max {max(rel):.3%}"
    )


if __name__ == "__main__":
    main()

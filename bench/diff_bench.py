"""How long `bootscope diff --by initcall` takes over 2 x 48 stored boots with about 600 initcalls each.

Usage: ``.venv/bin/python -m bench.diff_bench [-n 48] [--repeats 3] [--no-write]``. The boots are
SYNTHETIC: ``tests/planted_logs.py`` makes each from the real 6.1 cloud log with initcall_debug
(tests/data/debian-6.1-cloud-initcall-smp4.log, 575 initcalls, 1541 lines): every silence between lines
scaled by seeded lognormal noise (2 %), and in variant ``slow`` one initcall (``init_kprobe_trace``) made
50 ms slower. They are stored in a SQLite store as a real run stores them (console lines, metrics), so
the timing covers what a user waits for: reading every boot back, the one stored-boot analysis of each,
the component extraction, the statistics and rendering the JSON. Measured: the use case in this
process (``diff_run`` + ``to_json``), median of ``--repeats``; and the whole command once
(``python -m bootscope diff ...``: interpreter start and imports included). Writes a "diff" section
into bench/RESULTS.md unless --no-write.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.results import write_section

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "data" / "debian-6.1-cloud-initcall-smp4.log"
sys.path.insert(0, str(ROOT / "tests"))  # the synthetic-boot maker the tests use
from planted_logs import store_planted_run  # noqa: E402

from bootscope.report.diff_out import to_json  # noqa: E402
from bootscope.store import Store  # noqa: E402
from bootscope.usecases.diff import diff_run  # noqa: E402

PLANTED = "init_kprobe_trace"


def main(argv: list[str] | None = None) -> dict[str, float]:
    """Run the benchmark; return the measures (seconds) and write RESULTS.md's diff section."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("-n", type=int, default=48, help="boots per variant (48: the issue's 2 x 48)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv if argv is not None else [])
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "diff.db"
        started = time.monotonic()
        store_planted_run(db, SOURCE, {"base": {}, "slow": {PLANTED: 50_000}}, args.n)
        build_s = time.monotonic() - started
        times = []
        for _ in range(args.repeats):
            started = time.monotonic()
            with Store.open(db) as store:
                result = diff_run(
                    store, 1, metric="kernel_init_s", kinds=("initcall",), baseline=None, variant=None,
                    alpha=0.05, fdr=0.05,
                )  # fmt: skip
            to_json(result, 20)
            times.append(time.monotonic() - started)
        first = result.attribution.components[0]
        components = len(result.attribution.components)
        command = [sys.executable, "-m", "bootscope", "diff", "1", "--db", str(db), "--by", "initcall",
                   "--format", "json"]  # fmt: skip
        started = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
        cli_s = time.monotonic() - started
        assert PLANTED in done.stdout
    measures = {
        "use_case_s": statistics.median(times),
        "cli_s": cli_s,
        "build_s": build_s,
        "components": float(components),
    }
    print(
        f"diff --by initcall over 2 x {args.n} boots, {components} components: "
        f"median {measures['use_case_s']:.2f} s in process (of {', '.join(f'{t:.2f}' for t in times)}), "
        f"{cli_s:.2f} s the whole command; first: {first.kind} {first.name} {first.shift_s:+.4f} s "
        f"(q = {first.q:.2g})",
        flush=True,
    )
    if not args.no_write:
        write_section(
            "diff",
            "## diff\n\n"
            f"`python -m bench.diff_bench -n {args.n} --repeats {args.repeats}`: "
            f"`bootscope diff --by initcall` over 2 x {args.n} stored boots, SYNTHETIC (each made from the "
            "real 6.1 cloud initcall_debug log `tests/data/debian-6.1-cloud-initcall-smp4.log`, 575 "
            "initcalls, by `tests/planted_logs.py`: every silence scaled by 2 % lognormal noise, "
            "`init_kprobe_trace` 50 ms slower in one variant), stored in SQLite as a real run stores "
            "them. Shared 2-core host, other engineers' jobs running.\n\n"
            "| what | number |\n| --- | --- |\n"
            f"| components compared | {components} (initcalls present in both variants) |\n"
            f"| diff in process (read + analyse every boot, components, statistics, JSON): median of "
            f"{args.repeats} | {measures['use_case_s']:.2f} s ({', '.join(f'{t:.2f}' for t in times)}) |\n"
            "| the whole command, `python -m bootscope diff 1 --by initcall --format json` | "
            f"{cli_s:.2f} s |\n"
            f"| first component | {first.kind} `{first.name}`, {first.shift_s:+.4f} s, q = {first.q:.2g} |\n",
        )
    return measures


if __name__ == "__main__":
    main(sys.argv[1:])

"""Run every benchmark module in turn; each records its own section of bench/RESULTS.md.

Usage: ``python -m bench.run [NAME ...]`` (names: analyze, run, report, sweep, runner, diff; default all).
"""

from __future__ import annotations

import importlib
import sys

BENCHES = ("analyze", "run", "report", "sweep", "runner", "diff")


def main(argv: list[str]) -> int:
    """Run the named benchmarks (all by default); returns the process exit code."""
    names = argv or list(BENCHES)
    for name in names:
        if name not in BENCHES:
            print(f"bench: unknown benchmark {name!r}; choose from {', '.join(BENCHES)}", file=sys.stderr)
            return 2
        module = importlib.import_module(f"bench.{name}_bench")
        print(f"== bench {name}", flush=True)
        module.main([])  # each benchmark on its own defaults
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""A real history for `bootscope watch` (issue 27): Debian's kernels booted in revision order, a
planted regression at a known revision, the alerts that follow.

Run: nice -n 10 .venv/bin/python -m bench.watch_history [--flavour cloud] [--boots 3] [--plant 6]
     [--option memtest=1] [--base-append "initcall_debug ignore_loglevel"] [--dir DIR]

Every linux-image-*-<flavour>-amd64 the package index offers (6.1.0-N, then 6.12.N: Debian's own
order, `usecases/history.debian_series`) is one revision; each is booted ``--boots`` times under TCG
by `bootscope run ... --meta revision=PACKAGE --meta revision_time=T` (T: one hour per revision).
From revision number ``--plant`` on, the kernel command line carries ``--option`` (slub_debug=FZPU:
every slab allocation checked, poisoned and traced; about +0.6 s of kernel_init_s here under TCG.
memtest=1 was tried first: Debian's cloud kernel is built without it and ignores it). The option
stands for a kernel change, so
the bench removes it from the stored variant options afterwards: what the watch sees is a kernel
that got slower at that revision (a command line is otherwise part of a series' fingerprint).
Then `bootscope watch --format json` with ``--rule`` (17 revisions are too few for the default
rule's windows: a step needs about 17 revisions around it before its window test can reach
p < 1e-4), and the alerts are checked against what was planted.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MOVED_SHOWN = 12  # an alert's steps shown, largest first


def _bootscope(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bootscope", *args], capture_output=True, text=True, check=False
    )


def main() -> None:
    """Boot the series, plant, watch; print and record the outcome in bench/RESULTS.md."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--flavour", default="cloud")
    parser.add_argument("--boots", type=int, default=3)
    parser.add_argument("--plant", type=int, default=5)
    parser.add_argument("--rule", default="--alpha 0.01 --min-back 5 --min-fore 4 --by phase")
    parser.add_argument("--reuse", action="store_true", help="Judge the store of an earlier run again.")
    parser.add_argument("--option", default="slub_debug=FZPU")
    parser.add_argument(
        "--base-append",
        default="",
        help="Kernel options every revision boots with (initcall_debug: per-initcall series), kept.",
    )
    parser.add_argument("--dir", type=Path, default=Path("/tmp/watch-history"))
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    import sqlalchemy as sa

    from bench.results import write_section
    from bootscope.store import Store, schema
    from bootscope.usecases.history import debian_series

    args.dir.mkdir(parents=True, exist_ok=True)
    db = args.dir / "history.db"
    if not args.reuse:
        db.unlink(missing_ok=True)
    revisions = debian_series(args.flavour)
    t0 = time.time() - 3600.0 * len(revisions)  # one revision an hour, the last one an hour ago
    started = time.perf_counter()
    for i, spec in enumerate([] if args.reuse else revisions):
        name = spec.removeprefix("debian:")
        argv = [
            "run", spec, "-n", str(args.boots), "--warmup", "0", "--accel", "tcg", "--seed", str(i),
            "--db", str(db), "--meta", f"revision={name}", "--meta", f"revision_time={t0 + 3600 * i:.0f}",
        ]  # fmt: skip
        words = " ".join(w for w in (args.base_append, args.option if i >= args.plant else "") if w)
        if words:
            argv += ["--append", words]
        done = _bootscope(*argv)
        print(
            f"{i:2d} {name}: exit {done.returncode} {done.stderr.strip()[-160:] if done.returncode else ''}"
        )
    boot_s = time.perf_counter() - started
    with Store.open(str(db)) as store, store.transaction("un-planting") as conn:
        conn.execute(sa.delete(schema.watch_items))
        conn.execute(sa.delete(schema.watch_events))
        conn.execute(sa.delete(schema.watch_alerts))
        for row in conn.execute(sa.select(schema.variants.c.id, schema.variants.c.config)).all():
            config = dict(row.config)
            config["append"] = args.base_append
            conn.execute(
                sa.update(schema.variants).where(schema.variants.c.id == row.id).values(config=config)
            )
    watched = _bootscope("watch", "--db", str(db), "--format", "json", *args.rule.split())
    if watched.returncode != 0:
        raise SystemExit(f"watch failed: {watched.stderr}")
    document = json.loads(watched.stdout)
    table = _bootscope("alerts", "--db", str(db)).stdout
    planted = revisions[args.plant].removeprefix("debian:")
    order = [r.removeprefix("debian:") for r in revisions]
    lines = []
    hit = False
    for alert in document["alerts"]:
        first, last = order.index(alert["first_revision"]), order.index(alert["last_revision"])
        holds = first <= args.plant <= last
        hit = hit or (holds and alert["kind"] == "regression")
        steps = sorted(
            (item for item in alert["items"] if item["shift"] is not None), key=lambda i: -abs(i["shift"])
        )
        moved = ", ".join(
            f"{item['metric']} {item['component']} {item['shift'] * 1000:+.0f} ms"
            f" ({item['jitter_ratio'] or float('inf'):.1f}x jitter, p {item['p']:.1g})"
            for item in steps[:MOVED_SHOWN]
        ) + (f", and {len(steps) - MOVED_SHOWN} more" if len(steps) > MOVED_SHOWN else "")
        lines.append(
            f"| {alert['id']} | {alert['kind']} | {alert['first_revision']}..{alert['last_revision']}"
            f" | {'yes' if holds else 'no'} | {moved} |"
        )
    print(table)
    verdict = "found" if hit else "NOT found"
    print(f"planted {args.option} at {planted}: {verdict}")
    stamp = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    spent = (
        "the store of an earlier run (--reuse)"
        if args.reuse
        else f"{boot_s / 60:.1f} min of boots and downloads"
    )
    if not args.no_record:
        write_section(
            "watch: a real history (issue 27, `bench/watch_history.py`)",
            "## watch: a real history (issue 27, `bench/watch_history.py`)\n\n"
            f"Command: `nice -n 10 .venv/bin/python -m bench.watch_history --flavour {args.flavour} --boots"
            f" {args.boots} --plant {args.plant} --option {args.option} --rule '{args.rule}'"
            f"{f' --base-append {shlex.quote(args.base_append)}' if args.base_append else ''}"
            f"{' --reuse' if args.reuse else ''}`, {stamp}"
            f" UTC, this 2-core machine, TCG. {len(revisions)} revisions (Debian's {args.flavour} kernels in"
            f" the package index, oldest first: {order[0]} .. {order[-1]}), {args.boots} boots each,"
            f" {spent}. Planted: `{args.option}` from revision"
            f" {args.plant}"
            f" ({planted}) on. The planted regression was **{verdict}**.\n\n"
            "| alert | kind | revisions | holds the planted one | what moved |\n"
            "| --- | --- | --- | --- | --- |\n" + "\n".join(lines) + "\n",
        )


if __name__ == "__main__":
    main()

"""How far host load reaches an image's --icount guest time, over a virtio disk and as an NVDIMM.

Usage: ``.venv/bin/python -m bench.image_attach_bench [-n N] [--load K] [--image NAME] [--no-write]``.
One ``bootscope run --image NAME --icount 3`` with two variants that differ only in how the disk is
attached (``disk-attach=virtio``, ``disk-attach=nvdimm``), N boots each (default 4), two at a time,
while K busy processes (default 2, one per core here) keep the host loaded. Each round boots both
variants at the round's date (lab/qemu/guest_clock.py), so an attach that keeps the host out gives
values that differ only by the kernel's randomness, and one that lets it in spreads by host timing.

Prints, per variant, each boot's systemd_userspace_s, kernel_init_s and login_prompt_s (the host's
time to the prompt) with their spreads (max - min), and writes a section into bench/RESULTS.md
unless --no-write.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.results import write_section
from bootscope.metrics import KERNEL_INIT_S, LOGIN_PROMPT_S, SYSTEMD_USERSPACE_S
from bootscope.store import Store

SECTION = "Image disks under --icount: virtio against NVDIMM, on a loaded host"
VARIANTS = ("virtio", "nvdimm")
METRICS = (SYSTEMD_USERSPACE_S, KERNEL_INIT_S, LOGIN_PROMPT_S)


def _spin(stop_at: float) -> None:
    """Keep one core busy until the monotonic clock passes ``stop_at``."""
    count = 0
    while time.monotonic() < stop_at:
        count += 1


def _run(image: str, boots: int, db: Path) -> float:
    """Run the A/B into ``db``; return its wall time (s). Exits the bench if bootscope fails."""
    argv = [sys.executable, "-m", "bootscope", "run", "--image", image, "--icount", "3", "-j", "2"]
    argv += [f"--variant={name}:disk-attach={name}" for name in VARIANTS]
    argv += ["-n", str(boots), "--warmup", "0", "--accel", "tcg", "--seed", "11", "--json", "--db", str(db)]
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"bootscope run failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return time.monotonic() - started


def _table(db: Path) -> tuple[list[str], dict[str, dict[str, list[float]]]]:
    """Return the table's lines and the values per variant and metric, in boot order."""
    values: dict[str, dict[str, list[float]]] = {v: {m: [] for m in METRICS} for v in VARIANTS}
    failed: list[str] = []
    with Store.open(str(db)) as store:
        for boot in store.boots(1):
            if boot.outcome != "ok":
                failed.append(f"- boot {boot.index} ({boot.variant}): {boot.outcome}, {boot.reason}")
            for metric in METRICS:
                value = boot.metrics.get(metric)
                if boot.outcome == "ok" and value is not None:
                    values[boot.variant][metric].append(value)
    lines = ["| variant | metric (s) | boots, in order | spread (max - min) |", "| --- | --- | --- | --- |"]
    for variant in VARIANTS:
        for metric in METRICS:
            seen = values[variant][metric]
            shown = ", ".join(
                f"{value:.6f}" if metric != LOGIN_PROMPT_S else f"{value:.2f}" for value in seen
            )
            spread = f"{max(seen) - min(seen):.6f}" if seen else "-"
            lines.append(f"| {variant} | `{metric}` | {shown} | {spread} |")
    if failed:
        lines += ["", "Boots that did not end ok:", *failed]
    return lines, values


def main() -> None:
    """Run the bench; print the table and (unless --no-write) put it into RESULTS.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=4, help="boots per variant")
    parser.add_argument("--load", type=int, default=2, help="busy processes beside the boots")
    parser.add_argument("--image", default="bootscope-test", help="the image (bootscope image build NAME)")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--db", type=Path, help="keep the run in this store (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bootscope-attach-") as work:
        db = args.db or Path(work) / "attach.db"
        load_before = os.getloadavg()[0]
        # Longer than any run: the spinners are stopped when the run ends.
        spinners = [
            multiprocessing.Process(target=_spin, args=(time.monotonic() + 24 * 3600,), daemon=True)
            for _ in range(args.load)
        ]
        for spinner in spinners:
            spinner.start()
        try:
            wall_s = _run(args.image, args.n, db)
        finally:
            for spinner in spinners:
                spinner.terminate()
        lines, _ = _table(db)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    command = f".venv/bin/python -m bench.image_attach_bench -n {args.n} --load {args.load}"
    section = "\n".join(
        [
            f"## {SECTION}",
            "",
            f"`{command}`",
            f"({stamp}): one `bootscope run --image {args.image} --icount 3 -j 2` of {args.n} boots per",
            f"variant, {args.load} busy processes beside it (load average {load_before:.2f} before),",
            f"{wall_s:.0f} s wall. The variants differ only in `disk-attach`; each round boots both at its",
            "date.",
            "",
            *lines,
            "",
        ]
    )
    print(section)
    if not args.no_write:
        write_section(SECTION, section)


if __name__ == "__main__":
    main()

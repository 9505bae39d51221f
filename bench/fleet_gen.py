"""A SYNTHETIC fleet made from real logs: for `fleet import` benchmarks and the fleet tests.

Every file is a real kernel log of tests/data (QEMU consoles and a real arm64 server's dmesg) whose
printk timestamps are multiplied by a per-host factor (lognormal, sd ``host_sd``) and a per-boot
jitter (sd ``boot_sd``); hosts of ``regress_model`` in cohort ``canary`` get ``regress_factor`` on
top (the planted regression). A fraction of files is cut before ``Run /init`` (failed boots), and a
fraction is binary junk (bad files). The metadata CSV has columns file, host, model, kernel, cohort.
Nothing here is a measurement: the numbers only have the shape of real boots.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
# model -> (base log, kernel): the base logs all reach init, so their kernel_init_s is defined.
MODELS: dict[str, tuple[Path, str]] = {
    "qemu-smp1": (DATA / "debian-6.1-cloud-initcall-smp1.log", "6.1.0-56"),
    "qemu-smp4": (DATA / "debian-6.1-cloud-initcall-smp4.log", "6.1.0-56"),
    "qemu-smp2x2": (DATA / "multiboot-6.1-cloud-smp2-then-smp1.log", "6.1.0-56"),
    "qemu-smp2": (DATA / "debian-6.1-cloud-smp2.log", "6.1.0-56"),
    "xgene": (DATA / "hw" / "arm64-xgene-mustang-4.19-dmesg.log", "4.19.0-323"),
}
COHORTS = (("control", 0.6), ("canary", 0.2), ("canary-b", 0.2))
_STAMP = re.compile(r"^\[\s*(\d+\.\d{6})\]", re.M)


@dataclass(frozen=True, slots=True)
class _Base:
    pieces: tuple[str, ...]  # text between stamps: len(times) + 1 pieces
    times: np.ndarray
    init_at: int  # index of the piece holding "Run /init", where a failed boot is cut


def _base(path: Path) -> _Base:
    text = path.read_text(encoding="utf-8", errors="replace")
    parts = _STAMP.split(text)
    pieces, times = tuple(parts[0::2]), np.array([float(t) for t in parts[1::2]])
    init_at = next((i for i, p in enumerate(pieces) if "Run /init" in p), len(pieces) - 1)
    return _Base(pieces, times, init_at)


def _render(base: _Base, factor: float, cut: bool) -> str:
    stamps = [f"[{t:12.6f}]" for t in base.times * factor]
    end = base.init_at if cut else len(base.pieces)
    out = [base.pieces[0]]
    for i in range(1, end):
        out.append(stamps[i - 1])
        out.append(base.pieces[i])
    return "".join(out)


def make_fleet(
    directory: Path,
    n_files: int,
    *,
    seed: int = 1,
    models: Sequence[str] = tuple(MODELS),
    cohorts: Sequence[tuple[str, float]] = COHORTS,
    regress_model: str = "qemu-smp4",
    regress_factor: float = 1.10,
    host_sd: float = 0.03,
    boot_sd: float = 0.01,
    failed_fraction: float = 0.01,
    junk_fraction: float = 0.002,
) -> Path:
    """Write ``n_files`` synthetic logs under ``directory`` and return the metadata CSV's path."""
    rng = np.random.default_rng(seed)
    bases = {model: _base(MODELS[model][0]) for model in models}
    names = [name for name, _ in cohorts]
    weights = np.array([w for _, w in cohorts]) / sum(w for _, w in cohorts)
    directory.mkdir(parents=True, exist_ok=True)
    meta_path = directory / "hosts.csv"
    with meta_path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["file", "host", "model", "kernel", "cohort"])
        for i in range(n_files):
            model = models[i % len(models)]
            cohort = str(rng.choice(names, p=weights))
            host = f"h{i:06d}"
            rel = f"{model}/{host}.log"
            path = directory / rel
            path.parent.mkdir(exist_ok=True)
            factor = math.exp(rng.normal(0, host_sd) + rng.normal(0, boot_sd))
            if model == regress_model and cohort == "canary":
                factor *= regress_factor
            roll = rng.random()
            if roll < junk_fraction:
                path.write_bytes(rng.integers(0, 256, 4096, dtype=np.uint8).tobytes())
            else:
                path.write_text(_render(bases[model], factor, cut=roll < junk_fraction + failed_fraction))
            writer.writerow([rel, host, model, MODELS[model][1], cohort])
    return meta_path

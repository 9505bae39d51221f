"""Synthetic boots made from a real ``initcall_debug`` log: every silence between two lines scaled by
seeded noise, and chosen initcalls made slower by a planted amount. The diff tests and the diff
benchmark use them where many boots with a known answer are needed; they are synthetic and say so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

_STAMP = re.compile(r"^(?P<pre>.*?)\[\s*(?P<t>\d+\.\d+)\](?P<rest>.*)$")
_RETURNED = re.compile(
    r"^(?P<head> initcall (?P<name>[\w.]+)\+\S+ returned -?\d+ after )(?P<us>\d+)(?P<tail> usecs.*)$"
)


def planted_boot(
    lines: Sequence[str],
    seed: int,
    *,
    noise: float = 0.02,
    slower_us: Mapping[str, int] | None = None,
) -> str:
    """Return one synthetic boot's log text: the silences of ``lines`` (a real log) each scaled by
    a lognormal factor of spread ``noise`` (seeded), and each initcall named in ``slower_us`` made
    that many microseconds slower (its ``returned ... after N usecs`` and every later stamp)."""
    rng = np.random.default_rng(seed)
    slower = slower_us or {}
    out: list[str] = []
    last_old = 0.0
    new_t = 0.0
    for line in lines:
        match = _STAMP.match(line)
        if match is None:
            out.append(line)
            continue
        old_t = float(match["t"])
        factor = float(rng.lognormal(0.0, noise))
        new_t += max(old_t - last_old, 0.0) * factor
        last_old = max(last_old, old_t)
        rest = match["rest"]
        returned = _RETURNED.match(rest)
        if returned is not None:
            extra_us = slower.get(returned["name"], 0)
            new_t += extra_us / 1e6
            us = round(int(returned["us"]) * factor) + extra_us
            rest = f"{returned['head']}{us}{returned['tail']}"
        out.append(f"{match['pre']}[{new_t:12.6f}]{rest}")
    return "\n".join(out) + "\n"


def write_planted(
    source: Path,
    directory: Path,
    boots: int,
    seed: int,
    *,
    noise: float = 0.02,
    slower_us: Mapping[str, int] | None = None,
) -> list[Path]:
    """Write ``boots`` synthetic boots of ``source`` into ``directory`` (one file each, seeds
    ``seed``, ``seed + 1``, ...) and return their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    lines = source.read_text(encoding="utf-8", errors="replace").splitlines()
    paths = []
    for i in range(boots):
        path = directory / f"boot-{i:03d}.log"
        path.write_text(planted_boot(lines, seed + i, noise=noise, slower_us=slower_us), encoding="utf-8")
        paths.append(path)
    return paths


def store_planted_run(
    db: Path,
    source: Path,
    variants: Mapping[str, Mapping[str, int]],
    boots: int,
    seed: int = 1,
    noise: float = 0.02,
) -> int:
    """Store one run in ``db`` whose variants (name -> initcalls made slower, us) each hold
    ``boots`` synthetic boots of ``source``, in the form a real run stores them (console lines,
    ``kernel_init_s`` and ``userspace_s`` from the one stored-boot analysis); return the run's id."""
    from bootscope.analyze.captured import analyze_captured
    from bootscope.metrics import KERNEL_INIT_S, USERSPACE_S
    from bootscope.model import LogLine
    from bootscope.store import BootRecord, Store, VariantRecord

    lines = source.read_text(encoding="utf-8", errors="replace").splitlines()
    with Store.open(db) as store:
        record = store.create_experiment(
            plan={"variants": [{"name": name} for name in variants]},
            seed=seed,
            accel="tcg",
            accel_reason="synthetic boots (tests/planted_logs.py)",
            host={"synthetic": True},
            variants=[VariantRecord(name, {"smp": 4}) for name in variants],
        )
        index = 0
        for round_no in range(boots):
            for number, (name, slower) in enumerate(variants.items()):
                text = planted_boot(lines, seed + 1000 * number + round_no, noise=noise, slower_us=slower)
                captured = [LogLine(line) for line in text.splitlines()]
                metrics = analyze_captured(captured, host_start_ns=None).breakdown.metrics
                boot = BootRecord(
                    variant=name,
                    index=index,
                    warmup=False,
                    outcome="ok",
                    metrics={KERNEL_INIT_S: metrics.kernel_init_s, USERSPACE_S: metrics.userspace_s},
                )
                store.record_boot(record.id, boot, captured)
                index += 1
        store.set_status(record.id, "complete")
    return record.id

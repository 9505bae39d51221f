"""A real A/B on a full userspace boot: the default image with and without e2scrub_reap.service
(masked on the kernel command line with ``systemd.mask=``), which takes 6.6 s of the 24.6 s that
systemd's userspace took in tests/data/debian-12-image-systemd-tcg.tsv (TCG). bootscope's compare
must call the masked variant faster on systemd_userspace_s with 4 boots a side, the fewest with
which an exact two-sided Mann-Whitney test can reach p < 0.05 (4 vs 4: p >= 2/70)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bootscope.metrics import SYSTEMD_USERSPACE_S
from bootscope.store import Store
from tests.conftest import TEST_IMAGE

BOOTSCOPE = (sys.executable, "-m", "bootscope")
MASKED = "e2scrub_reap.service"


@pytest.mark.boot
@pytest.mark.xfail(
    strict=False,
    reason="first real run (bench/RESULTS.md): 4 boots a side under TCG on a shared 2-core host were "
    "not decisive (p = 0.686, one masked boot at 51.8 s); needs --icount, more boots or a slower unit",
)
def test_masking_a_slow_unit_is_called_faster(default_image: object, tmp_path: Path) -> None:
    db = tmp_path / "ab.db"
    done = subprocess.run(
        [*BOOTSCOPE, "run", "--image", TEST_IMAGE, "--variant", "base:",
         "--variant", f"masked:append=systemd.mask={MASKED}", "-n", "4", "--warmup", "0",
         "--accel", "tcg", "--timeout", "600", "--seed", "5", "--format", "json", "--db", str(db)],
        capture_output=True, text=True, timeout=1500, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    compared = subprocess.run(
        [*BOOTSCOPE, "compare", "latest", "--metric", SYSTEMD_USERSPACE_S, "--db", str(db)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    print(compared.stdout)
    assert compared.returncode == 0, compared.stderr
    as_json = subprocess.run(
        [*BOOTSCOPE, "compare", "latest", "--metric", SYSTEMD_USERSPACE_S, "--db", str(db),
         "--format", "json"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    doc = json.loads(as_json.stdout)
    assert doc["verdict"] == "faster", doc
    assert doc["shift"]["estimate"] < -1.0
    with Store.open(str(db)) as store:
        samples = store.samples(1, SYSTEMD_USERSPACE_S)
        print({name: [round(v, 3) for v in values] for name, values in samples.items()})
        assert len(samples["base"]) == len(samples["masked"]) == 4
        # the masked unit never ran in the masked boots; it did in the others
        masked_units = compare_units(store)
        assert masked_units == {"base": 4, "masked": 0}


def compare_units(store: Store) -> dict[str, int]:
    """Count, per variant, the boots whose collector lists the masked unit as having started."""
    from bootscope.lab.stored import analyze_stored_boot

    counts: dict[str, int] = {"base": 0, "masked": 0}
    records = store.boots(1)
    for record in records:
        units = analyze_stored_boot(store, 1, record.index, records=records).analysis.units
        # a oneshot without RemainAfterExit is never "active": it started if it left inactive
        counts[record.variant] += any(u.unit == MASKED and u.activating_s is not None for u in units)
    return counts

"""Full userspace boots: the default Debian image (built once per machine, tests/conftest.py) booted
under TCG to its login prompt twice in one `bootscope run --image` experiment; the stored metrics
checked against the guest's own `systemd-analyze time`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from kernel_pin import TEST_IMAGE

from bootscope.analyze.captured import analyze_captured
from bootscope.lab.plan import build_plan
from bootscope.metrics import INITRD_S, KERNEL_INIT_S, LOGIN_PROMPT_S, SYSTEMD_USERSPACE_S
from bootscope.store import Store

# systemd takes its userspace timestamp as main() starts and logs its start line a little later, and
# logs "Startup finished" a little after it takes the finish timestamp; under TCG on a busy host
# those gaps reach a few hundred ms.
AGREE_S = 1.0
BOOTSCOPE = (sys.executable, "-m", "bootscope")
LONG = ("--accel", "tcg", "--timeout", "600", "--seed", "7", "--json", "--db")


@pytest.mark.boot
def test_image_boots_to_login_twice_and_agrees_with_systemd(default_image: object, tmp_path: Path) -> None:
    db = tmp_path / "image.db"
    done = subprocess.run(
        [*BOOTSCOPE, "run", "--image", TEST_IMAGE, "-n", "2", "--warmup", "0", *LONG, str(db)],
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    json.loads(done.stdout)
    with Store.open(str(db)) as store:
        boots = store.boots(1)
        assert len(boots) == 2
        for boot in boots:
            assert boot.outcome == "ok", boot.reason
            for name in (KERNEL_INIT_S, INITRD_S, SYSTEMD_USERSPACE_S, LOGIN_PROMPT_S):
                assert boot.metrics[name] is not None and boot.metrics[name] > 0, name
            lines = store.boot_log(1, boot.index)
            analysis = analyze_captured(lines, host_start_ns=boot.host_start_ns)
            systemd = analysis.systemd
            assert systemd is not None and systemd.complete and systemd.time is not None
            assert systemd.time.finished and systemd.state in ("running", "degraded")
            assert systemd.units and systemd.blame and systemd.critical_chain
            assert "serial-getty@ttyS0.service" in {unit.unit for unit in systemd.units}
            # initramfs-tools is not systemd, so systemd charges the initramfs to "(kernel)".
            assert systemd.time.initrd_s is None and systemd.time.kernel_s is not None
            kernel_and_initrd = boot.metrics[KERNEL_INIT_S] + boot.metrics[INITRD_S]
            assert abs(kernel_and_initrd - systemd.time.kernel_s) < AGREE_S
            assert abs(boot.metrics[SYSTEMD_USERSPACE_S] - systemd.time.userspace_s) < AGREE_S
            # The prompt comes after the kernel, the initramfs and systemd's start on the host clock.
            assert boot.metrics[LOGIN_PROMPT_S] > boot.metrics[KERNEL_INIT_S] + boot.metrics[INITRD_S]


def test_image_variant_ends_at_the_login_prompt_with_more_memory() -> None:
    plan = build_plan(
        kernel=None, base_options=[("image", "x")], variant_texts=[], plan_file=None, settings={"seed": 1}
    )
    (variant,) = plan.variants
    assert variant.image == "x" and variant.kernel == "" and variant.mem_mb == 1024
    assert "login: " in variant.marker
    own = build_plan(
        kernel=None,
        base_options=[("image", "x"), ("mem", 2048), ("marker", "# $")],
        variant_texts=[],
        plan_file=None,
        settings={"seed": 1},
    ).variants[0]
    assert own.mem_mb == 2048 and own.marker == "# $"

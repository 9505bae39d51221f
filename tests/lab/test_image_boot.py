"""Full userspace boots: the default Debian image (built once per machine, tests/conftest.py) booted
under TCG with --icount to its login prompt eight times in one `bootscope run --image` A/B experiment;
the stored metrics checked against the guest's own `systemd-analyze time`, and the A/B decided.

The disk is attached as an NVDIMM (bootscope's choice under --icount), so the host's load cannot
reach guest time, and the A/B runs beside the other lane of `make test`, two boots at a time.

The A/B is a known answer: both variants ask the image's ``bootscope-delay.service`` (a oneshot that
multi-user.target waits for) for a DELAY_S-second sleep on the kernel command line, and one variant masks
that unit with ``systemd.mask=``. The masked variant must be called faster on systemd_userspace_s."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from kernel_pin import TEST_IMAGE

from bootscope.analyze.captured import analyze_captured
from bootscope.lab.plans.boot import build_plan
from bootscope.lab.plans.settings import GivenSettings
from bootscope.lab.qemu.image_guest import DELAY_OPTION, DELAY_UNIT
from bootscope.metrics import INITRD_S, KERNEL_INIT_S, LOGIN_PROMPT_S, SYSTEMD_USERSPACE_S
from bootscope.store import Store

# systemd takes its userspace timestamp as main() starts and logs its start line later (about 0.5 s
# under plain TCG, about 5 s of instructions under --icount 3); it logs "Startup finished" within a
# few ms of taking the finish timestamp, so the two clocks meet there.
FINISH_AGREE_S = 0.25
# The boots run under --icount (sleep=off): guest time counts instructions, and while the guest idles
# the virtual clock jumps to the next timer's deadline, so the planted sleep costs no wall time.
# Over a virtio disk the guest also idled while a host thread served its reads, and a loaded host
# served them late: the clock jumped on meanwhile, and one masked boot beside the other lane of
# `make test` ran 119743 s of guest time (2026-11-27; a 30 s plant hid under a 68.8 s boot before).
# Under --icount bootscope now attaches the image's disk as an NVDIMM (lab/qemu/disk.py): the guest
# reads it with its own instructions, never idles for the host, and its clock never sees the host's
# load. So a modest plant decides 4 boots a side, beside the other lane and two boots at a time: all
# 4 masked below all 4 delayed gives the exact rank test's p = 0.029.
DELAY_S = 30
BOOTS_PER_VARIANT = 4
# The boots of one variant differ only in the round's date (lab/qemu/guest_clock.py), which seeds the
# kernel's randomness: 0.08 s of spread in systemd_userspace_s on 2026-11-27, under a load of 4 busy
# processes on 2 cores. One warp to a timer due later adds whole seconds.
SPREAD_MAX_S = 1.0
BOOTSCOPE = (sys.executable, "-m", "bootscope")
LONG = ("--accel", "tcg", "--timeout", "900", "--seed", "7", "--db")


@dataclass(frozen=True)
class ImageRun:
    db: Path
    stdout: str


@pytest.fixture(scope="module")
def image_ab(default_image: object, tmp_path_factory: pytest.TempPathFactory) -> ImageRun:
    """One stored A/B run of the default image: ``delayed`` sleeps DELAY_S s before multi-user.target,
    ``masked`` asks for the same sleep and masks the unit that would do it."""
    db = tmp_path_factory.mktemp("image") / "image.db"
    delayed = f"delayed:append={DELAY_OPTION}={DELAY_S}"
    masked = f"masked:append={DELAY_OPTION}={DELAY_S} systemd.mask={DELAY_UNIT}"
    argv = [*BOOTSCOPE, "run", "--image", TEST_IMAGE, "--variant", delayed, "--variant", masked]
    argv += ["-n", str(BOOTS_PER_VARIANT), "--warmup", "0", "--icount", "3", "-j", "2"]
    argv += ["--json", *LONG, str(db)]
    done = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=3500,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return ImageRun(db, done.stdout)


# Eight full boots under TCG with --icount, two at a time.
@pytest.mark.timeout(3600)
@pytest.mark.boot
def test_image_boots_to_login_and_agrees_with_systemd(image_ab: ImageRun) -> None:
    json.loads(image_ab.stdout)
    with Store.open(str(image_ab.db)) as store:
        boots = store.boots(1)
        assert len(boots) == 2 * BOOTS_PER_VARIANT
        for boot in boots:
            assert boot.outcome == "ok", boot.reason
            # The disk is an NVDIMM, the root its whole-disk pmem device.
            assert "nvdimm,memdev=" in " ".join(boot.command) and "root=/dev/pmem0" in " ".join(boot.command)
            for name in (KERNEL_INIT_S, INITRD_S, SYSTEMD_USERSPACE_S, LOGIN_PROMPT_S):
                assert boot.metrics[name] is not None and boot.metrics[name] > 0, name
            lines = store.boot_log(1, boot.index)
            analysis = analyze_captured(lines, host_start_ns=boot.host_start_ns)
            systemd = analysis.systemd
            assert systemd is not None and systemd.complete and systemd.time is not None
            assert systemd.time.finished and systemd.state in ("running", "degraded")
            assert systemd.units and systemd.blame and systemd.critical_chain
            units = {unit.unit: unit for unit in systemd.units}
            assert "serial-getty@ttyS0.service" in units
            # initramfs-tools is not systemd, so systemd charges the initramfs to "(kernel)".
            assert systemd.time.initrd_s is None and systemd.time.kernel_s is not None
            kernel_and_initrd = boot.metrics[KERNEL_INIT_S] + boot.metrics[INITRD_S]
            finished = kernel_and_initrd + boot.metrics[SYSTEMD_USERSPACE_S]
            assert systemd.time.total_s is not None
            assert abs(finished - systemd.time.total_s) < FINISH_AGREE_S
            # The start line is logged after the timestamp systemd counts from, never before it.
            assert kernel_and_initrd > systemd.time.kernel_s - FINISH_AGREE_S
            # On the host clock the prompt arrives after systemd's start line.
            started_ns = next(line.host_ns for line in lines if "running in system mode" in line.text)
            assert started_ns is not None and boot.host_start_ns is not None
            assert boot.metrics[LOGIN_PROMPT_S] > (started_ns - boot.host_start_ns) / 1e9
            if boot.variant == "delayed":
                # A oneshot without RemainAfterExit is never "active": it runs from activating back to
                # inactive, and its time is that span, as systemd-analyze blame counts it. It is
                # inactive when the collector runs, which `systemctl show '*'` skips without --all.
                blamed = dict(systemd.blame)
                assert DELAY_S - 0.5 < blamed[DELAY_UNIT] < DELAY_S + 1.0
                delay = units[DELAY_UNIT]
                assert delay.active_s is None and delay.activation_s is not None
                assert abs(blamed[DELAY_UNIT] - delay.activation_s) < 0.01
                assert boot.metrics[SYSTEMD_USERSPACE_S] > DELAY_S
            else:
                assert DELAY_UNIT not in units  # masked: never started
        for variant in ("delayed", "masked"):
            times = [b.metrics[SYSTEMD_USERSPACE_S] for b in boots if b.variant == variant]
            assert max(times) - min(times) < SPREAD_MAX_S, (variant, times)


@pytest.mark.timeout(3600)
@pytest.mark.boot
def test_masking_the_slow_unit_is_called_faster(image_ab: ImageRun) -> None:
    metric = ("--metric", SYSTEMD_USERSPACE_S, "--format", "json")
    done = subprocess.run(
        [*BOOTSCOPE, "compare", "latest", "--db", str(image_ab.db), *metric],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    comparison = json.loads(done.stdout)
    assert (comparison["a"]["name"], comparison["b"]["name"]) == ("delayed", "masked")
    assert comparison["verdict"] == "faster", comparison
    assert comparison["shift"]["estimate"] < -DELAY_S / 3


def test_image_variant_ends_at_the_login_prompt_with_more_memory() -> None:
    plan = build_plan(
        kernel=None,
        base_options=[("image", "x")],
        variant_texts=[],
        plan_file=None,
        settings=GivenSettings(seed=1),
    )
    (variant,) = plan.variants
    assert variant.image == "x" and variant.kernel == "" and variant.mem_mb == 1024
    assert "login: " in variant.marker
    # A full boot runs on to the collector's accounting: 600 s unless a timeout is given.
    assert plan.timeout_s == 600.0
    given = build_plan(
        kernel=None,
        base_options=[("image", "x")],
        variant_texts=[],
        plan_file=None,
        settings=GivenSettings(seed=1, timeout_s=90.0),
    )
    assert given.timeout_s == 90.0
    kernel_only = build_plan(
        kernel="k", base_options=[], variant_texts=[], plan_file=None, settings=GivenSettings(seed=1)
    )
    assert kernel_only.timeout_s == 120.0
    own = build_plan(
        kernel=None,
        base_options=[("image", "x"), ("mem", 2048), ("marker", "# $")],
        variant_texts=[],
        plan_file=None,
        settings=GivenSettings(seed=1),
    ).variants[0]
    assert own.mem_mb == 2048 and own.marker == "# $"

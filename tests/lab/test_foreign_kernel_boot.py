"""A kernel foreign to the image: the pinned cloud kernel (not the release the test image was built
with) booted once through the CLI on the test image's root, with bootscope's root initramfs loading
that kernel's own virtio modules, to the login prompt under TCG (about 40 s here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from kernel_pin import TEST_IMAGE

from bootscope.analyze.captured import analyze_captured
from bootscope.lab.qemu.image import Image
from bootscope.lab.qemu.kernels import read_image_release
from bootscope.lab.qemu.root_initramfs import LOG_PREFIX
from bootscope.metrics import INITRD_S, KERNEL_INIT_S, LOGIN_PROMPT_S, SYSTEMD_USERSPACE_S
from bootscope.store import Store

# systemd logs "Startup finished" within a few ms of its finish timestamp (see test_image_boot.py).
FINISH_AGREE_S = 0.25


@pytest.mark.timeout(900)
@pytest.mark.boot
def test_a_foreign_kernel_boots_the_image_root_to_login(
    default_image: Image, cloud_kernel: Path, tmp_path: Path
) -> None:
    release = read_image_release(cloud_kernel)
    assert release is not None and release != default_image.release, "the kernel must be foreign to the image"
    db = tmp_path / "foreign.db"
    argv = [sys.executable, "-m", "bootscope", "run", str(cloud_kernel), "--image", TEST_IMAGE]
    argv += [
        "-n",
        "1",
        "--warmup",
        "0",
        "--accel",
        "tcg",
        "--timeout",
        "600",
        "--format",
        "json",
        "--db",
        str(db),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=800)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    (note,) = result["notes"]
    assert "via bootscope's initramfs" in note and "virtio_blk" in note and default_image.release in note
    with Store.open(str(db)) as store:
        (boot,) = store.boots(1)
        assert boot.outcome == "ok", boot.reason
        assert boot.kernel_release == release
        assert "via bootscope's initramfs" in boot.reason
        for name in (KERNEL_INIT_S, INITRD_S, SYSTEMD_USERSPACE_S, LOGIN_PROMPT_S):
            assert boot.metrics[name] is not None and boot.metrics[name] > 0, name
        lines = store.boot_log(1, boot.index)
    texts = [line.text for line in lines]
    # The kernel that ran is the given one, its initramfs is bootscope's, and it found the disk.
    assert any(f"Linux version {release} " in text for text in texts)
    assert any(LOG_PREFIX in text and "switch_root" in text for text in texts)
    assert any("[vda]" in text for text in texts)
    systemd = analyze_captured(lines, host_start_ns=boot.host_start_ns).systemd
    assert systemd is not None and systemd.time is not None and systemd.time.finished
    assert systemd.time.total_s is not None and systemd.time.userspace_s is not None
    # bootscope's initramfs is not systemd either: systemd charges it to "(kernel)".
    assert systemd.time.initrd_s is None
    finished = boot.metrics[KERNEL_INIT_S] + boot.metrics[INITRD_S] + boot.metrics[SYSTEMD_USERSPACE_S]
    assert abs(finished - systemd.time.total_s) < FINISH_AGREE_S
    # systemd counts userspace from its own start, a little before its start line.
    assert 0 < systemd.time.userspace_s - boot.metrics[SYSTEMD_USERSPACE_S] < 2.0
    started_ns = next(line.host_ns for line in lines if "running in system mode" in line.text)
    assert started_ns is not None and boot.host_start_ns is not None
    assert boot.metrics[LOGIN_PROMPT_S] > (started_ns - boot.host_start_ns) / 1e9

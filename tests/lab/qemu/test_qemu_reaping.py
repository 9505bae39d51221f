"""No QEMU outlives bootscope: Ctrl-C, SIGTERM or SIGKILL of the Python process that started it."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from bootscope.lab.qemu.initramfs import BUSYBOX, InitramfsSpec, build_initramfs

# The boot runs in a child Python; the unique name reaches it through the environment, so that only
# QEMU's own command line carries it and pgrep finds QEMU, not the child.
CHILD = """
import os
from pathlib import Path
from bootscope.lab.qemu.process import BootConfig, boot_once
name = "bootscope-test-" + os.environ["BOOTSCOPE_TEST_ID"]
boot_once(BootConfig(kernel=Path(os.environ["BOOTSCOPE_TEST_KERNEL"]),
    initrd=Path(os.environ["BOOTSCOPE_TEST_INITRD"]), append="", timeout_s=300,
    extra_qemu_args=("-name", name)))
"""


def _qemu_pids(test_id: str) -> list[int]:
    done = subprocess.run(
        ["pgrep", "-f", f"qemu-system.*bootscope-test-{test_id}"], capture_output=True, text=True
    )
    return [int(pid) for pid in done.stdout.split()]


def _wait_for(condition: object, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


@pytest.mark.boot
@pytest.mark.skipif(
    shutil.which("qemu-system-x86_64") is None or shutil.which("pgrep") is None, reason="no QEMU"
)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_no_qemu_outlives_a_stopped_parent(cloud_kernel: Path, signum: int) -> None:
    if not BUSYBOX.is_file():
        pytest.skip("busybox-static not installed")
    test_id = uuid.uuid4().hex
    env = dict(
        os.environ,
        BOOTSCOPE_TEST_ID=test_id,
        BOOTSCOPE_TEST_KERNEL=str(cloud_kernel),
        BOOTSCOPE_TEST_INITRD=str(build_initramfs(InitramfsSpec())),
    )
    child = subprocess.Popen([sys.executable, "-c", CHILD], env=env, stderr=subprocess.PIPE)
    try:
        assert _wait_for(lambda: _qemu_pids(test_id), 30), "QEMU never started"
        child.send_signal(signum)
        child.wait(timeout=30)
        assert _wait_for(lambda: not _qemu_pids(test_id), 10), f"QEMU outlived its parent after {signum!r}"
        if signum == signal.SIGINT:
            assert child.stderr is not None and b"KeyboardInterrupt" in child.stderr.read()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for pid in _qemu_pids(test_id):  # never leave one behind, even when the test fails
            os.kill(pid, signal.SIGKILL)

"""Tools the image build runs on the host: a command with one clear error line, removing a build
directory that a killed debootstrap left mounts in, and a lock per image store."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from bootscope.errors import BootError


def run_tool(argv: list[str], *, what: str, timeout_s: float, cwd: Path | None = None) -> None:
    """Run ``argv`` (in ``cwd``: default this process's directory); raises BootError with the tool's
    own error line when it fails or times out."""
    env = dict(os.environ, LC_ALL="C", DEBIAN_FRONTEND="noninteractive")
    try:
        done = subprocess.run(
            argv,
            env=env,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as error:
        raise BootError(f"{what} took longer than {timeout_s:.0f} s") from error
    except OSError as error:
        raise BootError(f"cannot run {argv[0]}: {error.strerror}") from error
    if done.returncode != 0:
        raise BootError(f"{what} failed: {error_line(done.stdout + done.stderr, done.returncode)}")


def error_line(output: str, returncode: int) -> str:
    """Return the line of a failed tool's output that says what went wrong."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("E:")]
    chosen = errors[0] if errors else (lines[-1] if lines else f"exit status {returncode}")
    if "No space left on device" in output or "Could not allocate block" in output:
        chosen = f"no space left ({chosen}): free disk space, or give a larger --size"
    return chosen[:300]


def remove_tree(path: Path) -> None:
    """Remove a build directory, unmounting first whatever a killed debootstrap left mounted in it
    (/proc, /sys: removing through a mount would delete the host's files)."""
    if not path.exists():
        return
    inside = mounts_under(path)
    for mount_point in sorted(inside, key=len, reverse=True):
        subprocess.run(["umount", "-l", mount_point], capture_output=True, check=False)
    if mounts_under(path):
        raise BootError(f"cannot unmount what the build left mounted under {path}: remove it by hand")
    shutil.rmtree(path, ignore_errors=True)


def mounts_under(path: Path) -> list[str]:
    """Return the mount points below ``path`` (from /proc/self/mounts)."""
    prefix = str(path.resolve()) + "/"
    try:
        text = Path("/proc/self/mounts").read_text()
    except OSError:
        return []
    points = [
        line.split(" ")[1].encode().decode("unicode_escape") for line in text.splitlines() if " " in line
    ]
    return [point for point in points if point.startswith(prefix)]

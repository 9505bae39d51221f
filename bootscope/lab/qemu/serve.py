"""A system image served as a long-lived machine: a place to try the SSH target without a lab.

QEMU boots the image (its own kernel and initramfs, root on its disk with ``snapshot=on``, so the
cached image is never changed while the machine's own writes, its journal included, live as long as
QEMU does) and keeps running across the guest's reboots, as hardware does: there is no
``-no-reboot``, so a reboot goes through the firmware again and a kexec stays in the same machine.
User-mode networking forwards ``127.0.0.1:PORT`` to the guest's SSH port; the serial console is a
UNIX socket (``socat - UNIX-CONNECT:PATH`` reads it) or, without one, dropped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bootscope import defaults
from bootscope.errors import BootError, InputError
from bootscope.lab.child import child_setup
from bootscope.lab.qemu.disk import GUEST_DEVICE, drive_option, option_path
from bootscope.lab.qemu.image import Image

GUEST_SSH_PORT = 22
_STDERR_TAIL_BYTES = 4096


@dataclass(frozen=True, slots=True)
class ServeConfig:
    """How to serve an image: the host port forwarded to the guest's SSH, the console's UNIX socket
    (None: no console), the machine (``mem_mb``, ``smp``, ``accel``) and extra kernel command line."""

    ssh_port: int
    console_socket: Path | None = None
    mem_mb: int = 1024
    smp: int = 1
    accel: str = "tcg"
    append: str = ""


def serve_command(image: Image, config: ServeConfig, qemu_binary: str = "qemu-system-x86_64") -> list[str]:
    """Return QEMU's argv that serves ``image`` as ``config`` says. Raises InputError for a bad
    port, accelerator or machine size."""
    if not 0 < config.ssh_port < 65536:
        raise InputError(f"--ssh-port {config.ssh_port}: not a TCP port")
    if config.accel not in ("tcg", "kvm"):
        raise InputError(f"--accel {config.accel!r}: use tcg or kvm")
    if config.smp < 1 or config.mem_mb < 256:
        raise InputError("a system image needs --smp 1 or more and --mem 256 (MiB) or more")
    if config.console_socket is None:
        serial = ["-serial", "null"]
    else:
        path = option_path(config.console_socket)
        serial = [
            "-chardev",
            f"socket,id=console,path={path},server=on,wait=off",
            "-serial",
            "chardev:console",
        ]
    root = GUEST_DEVICE["virtio"]
    append = f"root={root} {defaults.IMAGE_APPEND} console=ttyS0 {config.append}".strip()
    return [
        qemu_binary,
        "-accel",
        config.accel,
        "-m",
        str(config.mem_mb),
        "-smp",
        str(config.smp),
        "-display",
        "none",
        "-nodefaults",
        "-nic",
        f"user,model=virtio-net-pci,hostfwd=tcp:127.0.0.1:{config.ssh_port}-:{GUEST_SSH_PORT}",
        # Entropy from the host: without it a TCG guest's random pool fills slowly and sshd waits.
        "-device",
        "virtio-rng-pci",
        *serial,
        "-kernel",
        str(image.kernel),
        "-initrd",
        str(image.initrd),
        "-append",
        append,
        "-drive",
        drive_option(image.disk, "raw"),
    ]


def known_hosts_lines(image: Image, port: int) -> list[str]:
    """Return known_hosts lines for the image's SSH host keys as served on 127.0.0.1:``port``, read
    from its disk with debugfs (no boot, no trust on first use). Raises BootError when debugfs is
    missing or the image holds no host key (no openssh-server)."""
    if shutil.which("debugfs") is None:
        raise BootError("debugfs not found: install Debian's e2fsprogs")
    lines = []
    for kind in ("ed25519", "ecdsa", "rsa"):
        done = subprocess.run(
            ["debugfs", "-R", f"cat /etc/ssh/ssh_host_{kind}_key.pub", str(image.disk)],
            capture_output=True,
            text=True,
            check=False,
        )
        fields = done.stdout.split()
        if done.returncode == 0 and len(fields) >= 2 and fields[0].startswith(("ssh-", "ecdsa-")):
            lines.append(f"[127.0.0.1]:{port} {fields[0]} {fields[1]}")
    if not lines:
        raise BootError(f"image {image.name}: no SSH host key on its disk (build it with openssh-server)")
    return lines


def check_port_free(port: int) -> None:
    """Raise InputError if something on this host already listens on 127.0.0.1:``port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as error:
            raise InputError(f"--ssh-port {port}: 127.0.0.1:{port} is taken ({error.strerror})") from None


def serve(
    image: Image,
    config: ServeConfig,
    on_started: Callable[[int, list[str]], None],
    stop_requested: Callable[[], bool],
) -> str:
    """Run QEMU serving ``image`` until ``stop_requested()`` turns true (checked every 0.2 s; the
    CLI's signal handler sets it) or QEMU ends; return how it ended, in words. ``on_started`` gets
    QEMU's pid and argv. QEMU never outlives this call. Raises InputError for a taken port or bad
    options, BootError when QEMU is missing or exits with an error."""
    argv = serve_command(image, config)
    if shutil.which(argv[0]) is None:
        raise BootError(f"QEMU not found: {argv[0]} (install Debian's qemu-system-x86)")
    check_port_free(config.ssh_port)
    if config.console_socket is not None:
        if config.console_socket.exists() and not config.console_socket.is_socket():
            raise InputError(f"--console-socket {config.console_socket}: exists and is not a socket")
        config.console_socket.unlink(missing_ok=True)
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        process_group=0,  # Ctrl-C reaches bootscope, which stops QEMU and says so
        preexec_fn=child_setup(os.getpid()),
    )
    assert proc.stderr is not None
    os.set_blocking(proc.stderr.fileno(), False)
    stderr_tail = b""
    try:
        on_started(proc.pid, argv)
        while proc.poll() is None and not stop_requested():
            time.sleep(0.2)
            stderr_tail = _read_tail(proc, stderr_tail)
        if proc.poll() is None:
            return "stopped on request"
        stderr_tail = _read_tail(proc, stderr_tail)
        if proc.returncode != 0:
            text = stderr_tail.decode("utf-8", errors="replace").strip().replace("\n", " | ")
            raise BootError(f"QEMU exited with status {proc.returncode}: {text[-300:] or 'no stderr'}")
        return "the machine powered off"
    finally:
        _stop(proc)
        proc.stderr.close()
        if config.console_socket is not None:
            with contextlib.suppress(OSError):
                if config.console_socket.is_socket():
                    config.console_socket.unlink()


def _read_tail(proc: subprocess.Popen[bytes], tail: bytes) -> bytes:
    assert proc.stderr is not None
    with contextlib.suppress(BlockingIOError, OSError, TypeError):
        data = proc.stderr.read()
        if data:
            tail = (tail + data)[-_STDERR_TAIL_BYTES:]
    return tail


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Ask QEMU to quit (SIGTERM), then kill its process group; reap it."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
    while True:
        try:
            proc.wait()
            return
        except KeyboardInterrupt:
            continue

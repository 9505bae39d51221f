"""Child processes that die with bootscope: QEMU, a served machine, a console command.

A child left behind by a SIGKILLed bootscope would keep a guest running, a port forwarded or a
one-client console socket taken, so every long-lived child is started with :func:`child_setup`.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
from collections.abc import Callable

from bootscope.errors import BootError

_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def child_setup(parent_pid: int, affinity: tuple[int, ...] | None = None) -> Callable[[], None]:
    """Return the ``preexec_fn`` that makes the child die with ``parent_pid`` (PR_SET_PDEATHSIG,
    SIGKILL; exit at once if the parent is already gone) and, when given, pins it to ``affinity``."""
    # Loaded before the fork: the child should only call, not load libraries.
    prctl = getattr(ctypes.CDLL(None, use_errno=True), "prctl", None)

    def setup() -> None:
        if prctl is not None:
            prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent_pid:  # the parent died before prctl took effect
            os._exit(1)
        if affinity:
            os.sched_setaffinity(0, affinity)

    return setup


def start_child(argv: list[str], affinity: tuple[int, ...] | None, what: str) -> subprocess.Popen[bytes]:
    """Start ``argv`` (``what`` names it in errors) with its output piped, in its own process group
    (Ctrl-C in the terminal reaches bootscope, which decides when it stops), dying with bootscope and
    pinned to ``affinity`` (see :func:`child_setup`); raises BootError when it cannot start."""
    try:
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            process_group=0,
            preexec_fn=child_setup(os.getpid(), affinity),
        )
    except OSError as error:
        raise BootError(f"cannot start {what}: {error.strerror}") from error

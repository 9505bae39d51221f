"""A machine's serial console read through any command, every line stamped on the host as it arrives.

The command is the user's (``socat - UNIX-CONNECT:/run/machine.sock``, ``ipmitool ... sol activate``,
``picocom -b 115200 /dev/ttyUSB0``, ``cat /dev/ttyS1``): whatever it writes on standard output is the
console. A thread reads it for the whole run, cutting lines and stamping each with
``time.monotonic_ns()`` when its end arrives (grabserial's job), so that firmware and boot-loader
output is timed too. The command runs in its own process group and never outlives the reader.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import subprocess
import threading
import time
from pathlib import Path

from bootscope.errors import BootError, InputError
from bootscope.lab.child import child_setup
from bootscope.model import LogLine

MAX_LINE_BYTES = 1 << 16  # a longer line (binary junk on a console) is cut into pieces
_BAUDS = frozenset((9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600, 1500000))


def device_command(device: Path, baud: int) -> str:
    """Return the console command that reads serial ``device`` at ``baud`` (stty, then cat).
    Raises InputError for a missing device or a baud rate no UART uses."""
    if baud not in _BAUDS:
        raise InputError(f"--baud {baud}: use one of {', '.join(map(str, sorted(_BAUDS)))}")
    if not device.exists():
        raise InputError(f"--console-device {device}: no such device")
    quoted = shlex.quote(str(device))
    return f"stty -F {quoted} {baud} raw -echo && exec cat {quoted}"


class ConsoleReader:
    """Reads a console command's output on a thread; :meth:`lines_since` hands out stamped lines."""

    def __init__(self, command: str) -> None:
        self.command = command
        self._lines: list[LogLine] = []
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        self.ended: str | None = None

    def start(self) -> None:
        """Start the command and the reading thread. Raises BootError if it cannot start."""
        try:
            self._proc = subprocess.Popen(
                ["sh", "-c", self.command],
                # A pipe bootscope never writes to and keeps open: `socat -` and `ipmitool ... sol
                # activate` read their standard input too, and socat ends the connection half a
                # second after that input ends (as it would at once from /dev/null).
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                process_group=0,
                preexec_fn=child_setup(os.getpid()),
            )
        except OSError as error:
            raise BootError(f"--console {self.command!r}: cannot start it ({error.strerror})") from error
        self._thread = threading.Thread(target=self._read, name="bootscope-console", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        pending = b""
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            now_ns = time.monotonic_ns()
            if not data:
                break
            pending += data
            cut: list[LogLine] = []
            while True:
                end = pending.find(b"\n")
                if end < 0 and len(pending) > MAX_LINE_BYTES:
                    end = MAX_LINE_BYTES
                if end < 0:
                    break
                cut.append(_line(pending[:end], now_ns))
                pending = pending[end + 1 :]
            if cut:
                with self._lock:
                    self._lines.extend(cut)
        if pending.strip(b"\r"):
            with self._lock:
                self._lines.append(_line(pending, time.monotonic_ns()))
        code = self._proc.wait()
        self.ended = f"the console command ended (exit status {code})"

    def lines_since(self, host_ns: int) -> list[LogLine]:
        """Return the lines that arrived at or after ``host_ns`` (host monotonic ns), in order."""
        with self._lock:
            return [line for line in self._lines if line.host_ns is not None and line.host_ns >= host_ns]

    def forget_before(self, host_ns: int) -> None:
        """Drop the lines that arrived before ``host_ns`` (a measured boot no longer needs them)."""
        with self._lock:
            self._lines = [line for line in self._lines if line.host_ns is None or line.host_ns >= host_ns]

    def stop(self) -> None:
        """Stop the command (its whole process group) and the thread; safe to call twice."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if proc is not None:
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()


def _line(raw: bytes, host_ns: int) -> LogLine:
    return LogLine(text=raw.rstrip(b"\r").decode("utf-8", errors="replace"), host_ns=host_ns)

"""A root shell on a serial console, driven without knowing its prompt: each command is written as
one line between two echoed markers, and its output is what the console prints between them, its
exit status the number after the second. A shell that asks for a login first (``login:``) is logged
in as ``root`` (a console with a password is refused in one line). A libvirt domain's console is
one such shell (bootscope's shell initramfs keeps one there, as many test images do).

The markers are written split by a pair of quotes (``BS""END``), so the console's echo of the command
line never matches what the shell prints.
"""

from __future__ import annotations

import itertools
import re
import time

from bootscope.errors import BootError
from bootscope.lab.targets.console_read import BoardConsole
from bootscope.lab.targets.shell_ops import RUN_TIMEOUT_S, ShellOps

REACH_PROBE_S = 3.0  # one probe of the shell waits this long for its answer
_LOGIN = re.compile(r"login:\s*$")
_PASSWORD = re.compile(r"[Pp]assword:\s*$")
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class ConsoleShell(ShellOps):
    """The shell on console ``console`` of machine ``name``; ``who`` begins its errors."""

    def __init__(self, console: BoardConsole, name: str, who: str) -> None:
        self._console = console
        self._name = name
        self._who = who
        self._root = ""
        self._count = itertools.count(1)

    def reach(self, wait_s: float) -> None:
        """Wait up to ``wait_s`` for the shell to run a command (logging in as root when the console
        asks); raises BootError in one line when it never does, or asks for a password."""
        deadline = time.monotonic() + max(wait_s, REACH_PROBE_S)
        while True:
            self._console.write(b"\n")
            seen = self._text(self._console.read(REACH_PROBE_S / 3))
            if _PASSWORD.search(seen):
                raise BootError(f"{self._who}: the console of {self._name!r} asks for a password")
            if _LOGIN.search(seen):
                self._console.write(b"root\n")
            try:
                out, code = self.run("id -u", REACH_PROBE_S)
            except BootError:
                if time.monotonic() >= deadline:
                    raise
                continue
            if code == 0:
                self._root = "" if out.strip() == "0" else "sudo -n "
                self.run(f"{self._root}dmesg -n 1 2>/dev/null; true")  # no kernel lines in the answers
                return
            if time.monotonic() >= deadline:
                raise BootError(f"{self._who}: the console of {self._name!r} runs no commands: {out}")

    def run(self, command: str, timeout_s: float = RUN_TIMEOUT_S) -> tuple[str, int]:
        """Run ``command`` on the console's shell; return its output and exit status. Raises
        BootError when the shell does not answer within ``timeout_s``."""
        tag = f"{next(self._count)}x{time.monotonic_ns() % 1_000_000}"
        begin, end = f"BSBEGIN{tag}", re.compile(rf"BSEND{tag}:(\d+)")
        line = f'echo BS""BEGIN{tag}; {command}\necho BS""END{tag}:$?\n'
        self._console.write(line.encode())
        text = ""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            text += self._text(self._console.read(min(0.2, max(deadline - time.monotonic(), 0.001))))
            found = end.search(text)
            if found is not None:
                start = text.find(begin + "\n")
                body = text[start + len(begin) + 1 : found.start()] if start >= 0 else ""
                return _without_echo(body, tag), int(found[1])
        raise BootError(
            f"{self._who}: the shell on the console of {self._name!r} did not finish"
            f" {command.split()[0]!r} within {timeout_s:g} s"
        )

    def order(self, verb: str) -> int:
        """Write the reboot order ``verb`` (not waited for: the shell goes down with the system);
        return its host stamp (ns)."""
        self._console.write(f"{verb}\n".encode())
        return time.monotonic_ns()

    @staticmethod
    def _text(data: bytes) -> str:
        return _ESCAPES.sub("", data.decode("utf-8", errors="replace")).replace("\r", "")


def _without_echo(body: str, tag: str) -> str:
    """Return the command's output less the console's echo of the marker line that ends it."""
    lines = [line for line in body.split("\n") if f'BS""END{tag}' not in line]
    return "\n".join(lines).strip("\n")

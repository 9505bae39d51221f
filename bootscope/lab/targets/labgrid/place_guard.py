"""The guard that holds a labgrid place for bootscope (see :mod:`bootscope.lab.targets.labgrid.place`).

``python -m bootscope.lab.targets.labgrid.place_guard HOST:PORT PLACE`` acquires PLACE on the coordinator at
HOST:PORT through ``labgrid-client``, prints ``acquired`` (or ``error: REASON`` and exits 1), waits
until its standard input closes, releases the place and prints ``released`` (or ``error: REASON``).
SIGINT is ignored (the guard runs in its own session; its parent decides when the place goes) and
SIGTERM releases the place like the end of input.
"""

from __future__ import annotations

import contextlib
import re
import signal
import subprocess
import sys
from types import FrameType

from bootscope.lab.targets.labgrid.place import ACQUIRED, ERROR_PREFIX, RELEASED

CLIENT_WAIT_S = 60.0
# labgrid-client's prefixes before its reason ("labgrid-client: Error: Server error: Error: ...")
_NOISE = re.compile(r"^(?:[\w.-]+: )?(?:(?:Server error|Error): )*")


def _client(coordinator: str, place: str, action: str) -> str:
    """Run ``labgrid-client`` once; return an empty string, or its last line of error."""
    command = [sys.executable, "-m", "labgrid.remote.client", "-x", coordinator, "-p", place, action]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=CLIENT_WAIT_S, check=False)
    except subprocess.TimeoutExpired:
        return f"labgrid-client {action} did not answer within {CLIENT_WAIT_S:g} s"
    if done.returncode == 0:
        return ""
    lines = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
    last = lines[-1] if lines else f"labgrid-client {action} exited {done.returncode}"
    return " ".join(_NOISE.sub("", last).split())[:300]


def _say(text: str) -> None:
    print(text, flush=True)


def _on_term(_signum: int, _frame: FrameType | None) -> None:
    raise EOFError


def main(argv: list[str]) -> int:
    """Hold the place ``argv`` names (see the module's docstring); return the exit status."""
    if len(argv) != 2:
        _say(f"{ERROR_PREFIX}usage: place_guard HOST:PORT PLACE")
        return 2
    coordinator, place = argv
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _on_term)
    error = _client(coordinator, place, "acquire")
    if error:
        _say(f"{ERROR_PREFIX}{error}")
        return 1
    _say(ACQUIRED)
    try:
        sys.stdin.read()
    except EOFError:
        pass
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        error = _client(coordinator, place, "release")
        with contextlib.suppress(BrokenPipeError):  # the parent is gone: nobody reads the answer
            _say(f"{ERROR_PREFIX}{error}" if error else RELEASED)
    return 1 if error else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""A board reached through labgrid: its power through the labgrid target's ``PowerProtocol`` driver,
its console through its ``ConsoleProtocol`` driver (labgrid's QEMUDriver is both, which makes any
machine a board). A boot is one power cycle: off, then on at the moment every time is measured
from, then the console read until the marker, each line stamped on this host when it arrives (as a
QEMU console is), then off again. labgrid is imported when a board is first used: no other command
pays for it.

A target that reaches its board through a place on a labgrid coordinator (a ``RemotePlace``
resource) has the place acquired when the board is opened and released when it is closed, however
bootscope ends (see :mod:`bootscope.lab.targets.labgrid_place`).

labgrid's QEMU driver waits about 10 ms after data arrives before it reads, so its stamps may be up to
10 ms late; a serial console's are as late as its driver delivers the bytes.
"""

from __future__ import annotations

import contextlib
import re
import sys
import time
from typing import Any

from bootscope.errors import BootError
from bootscope.lab.hostinfo import measuring_host
from bootscope.lab.plans.board import BoardSpec, parse_board
from bootscope.lab.qemu.process import LineSplitter
from bootscope.lab.targets.base import LineCallback
from bootscope.lab.targets.labgrid_place import Place, PlaceHold, places_of
from bootscope.model import Boot, LogLine, Outcome

READ_BYTES = 4096
READ_WAIT_S = 0.2  # the longest one console read waits; Ctrl-C and the timeout are seen this often
_PANIC = re.compile(r"Kernel panic - not syncing")


class LabgridBoard:
    """The board ``labgrid:ENV:TARGET`` names; opened on first use, closed by :meth:`close`."""

    def __init__(self, url: str) -> None:
        self.spec: BoardSpec = parse_board(url)
        self._url = url
        self._target: Any = None
        self._power: Any = None
        self._console: Any = None
        self._holds: list[PlaceHold] = []

    @property
    def name(self) -> str:
        """The board as the plan names it."""
        return self._url

    def host_info(self) -> dict[str, Any]:
        """Return this host's description and the board's labgrid environment and target."""
        where = {"labgrid_env": str(self.spec.env), "labgrid_target": self.spec.target}
        places = self._places()
        if places:
            where["labgrid_places"] = ", ".join(f"{place.name}@{place.coordinator}" for place in places)
        return measuring_host() | where

    def _places(self) -> list[Place]:
        if self._holds:
            return [hold.place for hold in self._holds]
        with contextlib.suppress(Exception):  # a bad environment is reported when the board opens
            from labgrid.config import Config

            return places_of(Config(str(self.spec.env)), self.spec.target)
        return []

    def open(self) -> None:
        """Open the labgrid environment and its target, acquiring the target's places first; raises
        BootError (one line: labgrid's reason) when any of it fails, with every place released."""
        if self._target is not None:
            return
        try:
            from labgrid import Environment
        except ImportError as error:
            raise BootError(f"labgrid is not installed ({error}): pip install labgrid") from None
        try:
            env = Environment(config_file=str(self.spec.env))
            places = places_of(env.config, self.spec.target)
        except Exception as error:  # labgrid raises its own errors for a bad environment
            raise BootError(f"labgrid: {self.spec.env}: {_one_line(error)}") from None
        try:
            self._hold(places)
            target = self._target_of(env)
        except BaseException:
            self._release()
            raise
        if target is None:
            self._release()
            raise BootError(f"labgrid: {self.spec.env} has no target {self.spec.target!r}")
        try:
            self._power = target.get_driver("PowerProtocol")
            self._console = target.get_driver("ConsoleProtocol")
        except Exception as error:
            self._release()
            raise BootError(f"labgrid: target {self.spec.target!r}: {_one_line(error)}") from None
        self._target = target

    def _hold(self, places: list[Place]) -> None:
        for place in places:
            hold = PlaceHold(place)
            hold.acquire()
            self._holds.append(hold)

    def _target_of(self, env: Any) -> Any:
        try:
            return env.get_target(self.spec.target)
        except Exception as error:  # labgrid raises its own errors (a place's resources, a driver)
            raise BootError(f"labgrid: {self.spec.env}: {_one_line(error)}") from None

    def _release(self) -> list[str]:
        problems = []
        while self._holds:
            hold = self._holds.pop()
            problem = hold.release()
            if problem:
                problems.append(f"labgrid: place {hold.place.name!r} not released: {problem}")
        return problems

    def power_cycle(self, timeout_s: float, marker_regex: str, on_line: LineCallback | None) -> Boot:
        """Boot the board once from power-on (see the module's docstring); raises BootError when labgrid
        cannot drive its power or console, KeyboardInterrupt when ``on_line`` raises it (the board is
        switched off either way)."""
        self.open()
        marker = re.compile(marker_regex)
        splitter = LineSplitter()
        lines: list[LogLine] = []
        outcome, reason = Outcome.TIMEOUT, f"no marker within {timeout_s:g} s of power-on"
        self._switch(on=False)
        start_ns = time.monotonic_ns()
        try:
            self._switch(on=True)
            deadline_ns = start_ns + int(timeout_s * 1e9)
            while time.monotonic_ns() < deadline_ns:
                wait_s = min(READ_WAIT_S, (deadline_ns - time.monotonic_ns()) / 1e9)
                for line in splitter.feed(self._read(max(wait_s, 0.001)), time.monotonic_ns()):
                    lines.append(line)
                    if on_line is not None:
                        on_line(line)
                    if _PANIC.search(line.text):
                        outcome, reason = Outcome.PANIC, line.text.strip()[:200]
                    if marker.search(line.text) and outcome is not Outcome.PANIC:
                        outcome, reason = Outcome.OK, ""
                if outcome is not Outcome.TIMEOUT:
                    break
            lines += splitter.flush(time.monotonic_ns())
        finally:
            end_ns = time.monotonic_ns()
            self._switch(on=False)
        return Boot(
            lines=tuple(lines),
            outcome=outcome,
            reason=reason,
            machine=self.name,
            host_start_ns=start_ns,
            host_end_ns=end_ns,
            command=("labgrid", str(self.spec.env), self.spec.target),
        )

    def _read(self, wait_s: float) -> bytes:
        try:
            data = self._console.read(size=READ_BYTES, timeout=wait_s)
        except Exception as error:
            if type(error).__name__ == "TIMEOUT":  # pexpect's, raised by labgrid for no data
                return b""
            raise BootError(f"labgrid: the console of {self.spec.target!r}: {_one_line(error)}") from None
        return bytes(data or b"")

    def _switch(self, on: bool) -> None:
        try:
            if on:
                self._power.on()
            else:
                self._power.off()
        except Exception as error:
            state = "on" if on else "off"
            raise BootError(
                f"labgrid: cannot switch {self.spec.target!r} {state}: {_one_line(error)}"
            ) from None

    def close(self) -> None:
        """Switch the board off, deactivate its drivers and release its places; safe to call twice.
        A place that could not be released is named on standard error (nothing is raised: this runs
        when a run ends, however it ends)."""
        target, self._target = self._target, None
        if target is not None:
            with contextlib.suppress(Exception):
                self._power.off()
            with contextlib.suppress(Exception):
                target.deactivate_all_drivers()
        for problem in self._release():
            print(f"bootscope: warning: {problem}", file=sys.stderr)


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text[:300]

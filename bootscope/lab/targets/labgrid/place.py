"""Places on a labgrid coordinator, held for as long as a board is in use.

A labgrid environment whose target has a ``RemotePlace`` resource reaches its board through a place
on a coordinator (the address from the environment's ``coordinator_address`` option, else
``LG_COORDINATOR``, else labgrid's default, exactly as labgrid resolves it). labgrid expects the user
to acquire the place first; bootscope acquires it when the board is opened and releases it when the
board is closed.

The place is held by a small guard process (:mod:`bootscope.lab.targets.labgrid.place_guard`) in its own
session, not by bootscope itself: it acquires the place, then waits for its standard input to close,
then releases the place. bootscope holds the only write end of that pipe, so the place is released
when bootscope closes the board, when it is interrupted, when it crashes and when it is killed
(SIGKILL included): the kernel closes the pipe of a dead process.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bootscope.errors import BootError

DEFAULT_COORDINATOR = "127.0.0.1:20408"  # labgrid's own default
ACQUIRED = "acquired"
RELEASED = "released"
ERROR_PREFIX = "error: "
ACQUIRE_WAIT_S = 60.0
RELEASE_WAIT_S = 30.0


@dataclass(frozen=True, slots=True)
class Place:
    """A place on a labgrid coordinator: its name and the coordinator's ``HOST:PORT``."""

    name: str
    coordinator: str


def places_of(config: Any, target: str) -> list[Place]:
    """Return the places a labgrid environment's target reaches through ``RemotePlace`` resources
    (``config`` is labgrid's ``Config``); an empty list for a target with local resources only."""
    from labgrid.factory import TargetFactory

    targets: Mapping[str, Any] = config.get_targets() or {}
    target_config = targets.get(target) or {}
    resources, _drivers = TargetFactory.normalize_config(copy.deepcopy(target_config))
    coordinator = config.get_option(
        "coordinator_address", os.environ.get("LG_COORDINATOR", DEFAULT_COORDINATOR)
    )
    names = sorted(name for name in resources.get("RemotePlace", {}) if name)
    return [Place(name=name, coordinator=str(coordinator)) for name in names]


class PlaceHold:
    """One place held by a guard process from :meth:`acquire` until :meth:`release` (or until this
    process ends, however it ends)."""

    def __init__(self, place: Place) -> None:
        self.place = place
        self._guard: subprocess.Popen[str] | None = None

    def acquire(self) -> None:
        """Acquire the place; raises BootError with labgrid's one-line reason when it cannot be (the
        coordinator is unreachable, the place is unknown or someone else holds it)."""
        command = [sys.executable, "-m", "bootscope.lab.targets.labgrid.place_guard"]
        guard = subprocess.Popen(
            [*command, self.place.coordinator, self.place.name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,  # Ctrl-C at the terminal is ours to handle, not the guard's
        )
        assert guard.stdout is not None
        first = guard.stdout.readline().strip()
        if first != ACQUIRED:
            guard.kill()
            guard.wait()
            reason = first.removeprefix(ERROR_PREFIX) or f"the place guard exited ({guard.returncode})"
            where = f"place {self.place.name!r} on {self.place.coordinator}"
            raise BootError(f"labgrid: cannot acquire {where}: {reason}")
        self._guard = guard

    def release(self) -> str:
        """Release the place (the guard releases it when its input closes); returns an empty string,
        or the reason the release failed. Safe to call twice."""
        guard, self._guard = self._guard, None
        if guard is None:
            return ""
        assert guard.stdin is not None and guard.stdout is not None
        guard.stdin.close()
        try:
            last = guard.stdout.readline().strip()
            guard.wait(timeout=RELEASE_WAIT_S)
        except subprocess.TimeoutExpired:
            guard.kill()
            guard.wait()
            return f"the place guard did not release {self.place.name!r} within {RELEASE_WAIT_S:g} s"
        if last == RELEASED:
            return ""
        return last.removeprefix(ERROR_PREFIX) or f"the place guard exited ({guard.returncode})"


class PlaceHolds:
    """The places one board holds, acquired in order and released in reverse."""

    def __init__(self) -> None:
        self._holds: list[PlaceHold] = []

    @property
    def places(self) -> list[Place]:
        """The places held now."""
        return [hold.place for hold in self._holds]

    def acquire(self, places: list[Place]) -> None:
        """Acquire each of ``places`` (those acquired stay held when one fails: see :meth:`release`);
        raises what :meth:`PlaceHold.acquire` raises."""
        for place in places:
            hold = PlaceHold(place)
            hold.acquire()
            self._holds.append(hold)

    def release(self) -> list[str]:
        """Release every place held; return one line per place that could not be released."""
        problems = []
        while self._holds:
            hold = self._holds.pop()
            problem = hold.release()
            if problem:
                problems.append(f"labgrid: place {hold.place.name!r} not released: {problem}")
        return problems

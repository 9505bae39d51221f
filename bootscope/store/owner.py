"""Which process owns a running experiment, and whether it is still alive.

An experiment is ``running`` from its creation (or resume) until the owner sets it complete or
interrupted. A process killed with SIGKILL (or an OOM kill, a power cut) never does, and the run would
show as running forever. So the store records the owner: pid, host name, and the process's start time
(``/proc/<pid>/stat`` field 22, in clock ticks since boot, with the boot id), so that a new process that
happens to reuse the pid is not taken for the owner.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

from bootscope.store.records import STATUS_RUNNING, ExperimentRecord, Owner

# /proc/<pid>/stat: after the ")" that closes the command name, field 3 (state) comes first, so the
# start time, field 22 (proc(5)), is the 20th.
_STATE_INDEX = 0
_START_TIME_INDEX = 19


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown-boot"


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 1 :].split()


def process_start(pid: int) -> str | None:
    """Return ``BOOT_ID:START_TICKS`` identifying process ``pid`` (None when there is no such process
    or no /proc); equal for one process, different for a later process that reuses the pid."""
    fields = _stat_fields(pid)
    if fields is None or len(fields) <= _START_TIME_INDEX:
        return None
    return f"{_boot_id()}:{fields[_START_TIME_INDEX]}"


def current_owner() -> Owner:
    """Return this process as an experiment's owner (pid, host name, start time)."""
    pid = os.getpid()
    return Owner(pid=pid, host=socket.gethostname(), started=process_start(pid))


def owner_columns() -> dict[str, Any]:
    """Return the experiments-table values that record this process as the owner."""
    owner = current_owner()
    return {"owner_pid": owner.pid, "owner_host": owner.host, "owner_started": owner.started}


def owner_from_row(row: Any) -> Owner | None:
    """Return the owner stored in an experiments row, None for rows written before owners were
    recorded (schema 1)."""
    pid = getattr(row, "owner_pid", None)
    host = getattr(row, "owner_host", None)
    if pid is None or host is None:
        return None
    return Owner(pid=int(pid), host=str(host), started=getattr(row, "owner_started", None))


def on_this_host(owner: Owner) -> bool:
    """True when the owner ran on this machine (same host name), where its liveness can be checked."""
    return owner.host == socket.gethostname()


def owner_alive(owner: Owner) -> bool:
    """True when the owner process still runs on this host: the pid exists, is not a zombie, and has
    the recorded start time (a reused pid has another). Only meaningful when ``on_this_host``."""
    fields = _stat_fields(owner.pid)
    if fields is None:
        return False
    if fields[_STATE_INDEX] in ("Z", "X"):  # killed, waiting for its parent to reap it
        return False
    return owner.started is None or process_start(owner.pid) == owner.started


def shown_status(experiment: ExperimentRecord) -> str:
    """Return the status to show for ``experiment``: the stored one, except that a ``running``
    experiment whose owner process is gone from this host is ``interrupted (owner gone)``, and one
    owned on another host is ``running (on HOST)`` (its liveness cannot be checked from here)."""
    owner = experiment.owner
    if experiment.status != STATUS_RUNNING or owner is None:
        return experiment.status
    if not on_this_host(owner):
        return f"{STATUS_RUNNING} (on {owner.host})"
    return STATUS_RUNNING if owner_alive(owner) else "interrupted (owner gone)"

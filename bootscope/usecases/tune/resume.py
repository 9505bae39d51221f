"""`bootscope tune --resume ID`: a tune stopped by Ctrl-C, a crash or SIGKILL goes on from its stored
runs. The probe run keeps the request (``tune_request``, JSON) and every later run names its probe
(``tune_of``); the search is replayed through :class:`Replay`, a runner that hands back the stored
runs in the order the search asks for them (finishing one an interruption cut short) and boots new
ones past them. The search reads only stored samples, so the replay takes the same decisions and
the tune continues where it stopped, no finished boot booted again."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from bootscope.errors import InputError
from bootscope.lab.plans.boot import Plan
from bootscope.lab.plans.settings import GivenSettings
from bootscope.lab.where import Where, stored_where
from bootscope.store import Store
from bootscope.store.records import STATUS_COMPLETE, ExperimentRecord
from bootscope.usecases.tune.request import TuneRequest
from bootscope.usecases.tune.screen import Runner

TUNE = "tune"
PROBE = "probe"
TUNE_OF = "tune_of"
REQUEST = "tune_request"


def request_document(request: TuneRequest) -> str:
    """Return ``request`` as the JSON text a probe run keeps."""
    data = asdict(request)
    data["machine"] = dict(request.machine or {})
    data["settings"] = request.settings.given()
    data["where"] = asdict(request.where) if request.where is not None else None
    return json.dumps(data, sort_keys=True)


def request_from_document(text: str) -> TuneRequest:
    """Return the request a probe run kept; raises InputError when it is not one this bootscope
    reads."""
    try:
        data: dict[str, Any] = json.loads(text)
        for key in ("allow", "only", "tries"):
            data[key] = tuple(data.get(key, ()))
        data["settings"] = GivenSettings(**data.get("settings", {}))
        _read_old_where(data)
        where = data.get("where")
        data["where"] = Where(**where) if where is not None else None
        return TuneRequest(**data)
    except (ValueError, TypeError) as error:
        raise InputError(f"the stored tune request cannot be read by this bootscope ({error})") from None


def _read_old_where(data: dict[str, Any]) -> None:
    """Turn the machine of a tune stored before ``where`` (``board``: a labgrid URL; ``ssh``: the
    SSH machine with its run's switches) into ``where`` and the switches, in place."""
    board = data.pop("board", None)
    ssh = data.pop("ssh", None)
    if board:
        data["where"] = asdict(stored_where(board))
    elif ssh:
        machine = stored_where(ssh["url"], ssh.get("identity"), ssh.get("known_hosts"), ssh.get("console"))
        data["where"] = asdict(machine)
        data["no_checks"] = bool(ssh.get("no_checks"))
        data["yes_this_machine"] = bool(ssh.get("yes_this_machine"))


def probe_of(store: Store, given: str) -> ExperimentRecord:
    """Return the probe run of the tune ``given`` names: a probe run's id, or 'latest' (the newest
    tune). Raises InputError when it names no tune, StoreError for an unknown run."""
    if given == "latest":
        probes = [s.experiment for s in store.list_experiments() if s.experiment.meta.get(TUNE) == PROBE]
        if not probes:
            raise InputError("--resume latest: this store holds no tune")
        return probes[-1]
    record = store.experiment(given)
    if record.meta.get(TUNE) != PROBE or REQUEST not in record.meta:
        raise InputError(f"--resume {given}: run {record.id} is not the first run of a tune (bootscope runs)")
    return record


def runs_of(store: Store, probe: ExperimentRecord) -> list[ExperimentRecord]:
    """Return the tune's stored runs in the order they were started: its probe, then the others."""
    later = [
        s.experiment for s in store.list_experiments() if s.experiment.meta.get(TUNE_OF) == str(probe.id)
    ]
    return [probe, *sorted(later, key=lambda record: record.id)]


@dataclass(slots=True)
class Replay:
    """A runner for a resumed tune: the k-th plan asked for is the k-th stored run (resumed with
    ``finish`` when it was cut short; InputError when its arms are not the plan's: the stored tune
    took another way), and plans past the stored runs are booted with ``boot``."""

    stored: list[ExperimentRecord]
    boot: Runner
    finish: Callable[[int], None]
    position: int = 0
    reused: list[int] = field(default_factory=list)

    def __call__(self, plan: Plan, meta: dict[str, str]) -> int:
        """Return the run of ``plan``: the next stored one, else a new one."""
        if self.position >= len(self.stored):
            return self.boot(plan, meta)
        record = self.stored[self.position]
        self.position += 1
        wanted = [(v.append, list(v.qemu_args)) for v in plan.variants]
        have = [(_command_line(v.config), list(v.config.get("qemu_args") or [])) for v in record.variants]
        if wanted != have:
            raise InputError(
                f"run {record.id} of the stored tune booted other command lines or QEMU options than"
                " the resumed search asks for: it cannot be resumed"
            )
        if record.status != STATUS_COMPLETE:
            self.finish(record.id)
        self.reused.append(record.id)
        return record.id


def _command_line(config: Mapping[str, Any]) -> str:
    """Return the command line a stored variant booted with: a board's kexec reboots keep it whole as
    ``cmdline`` (``board.py``), a QEMU guest's as ``append``."""
    return str(config.get("cmdline", "") if "board" in config else config.get("append", ""))

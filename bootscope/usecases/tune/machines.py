"""The machines ``tune`` reboots, by kind: each kind's adapter reads the machine's own command line
(the baseline every knob is applied to) and gives the runner that boots a tune's plan on it. A kind
of machine that ``tune`` can reboot is one row of :data:`ADAPTERS` (and its ``tune_reboots`` in
:data:`bootscope.lab.where.KINDS`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bootscope.errors import InputError
from bootscope.lab.progress import Reporter
from bootscope.lab.where import LABGRID, LIBVIRT, SSH
from bootscope.store import Store
from bootscope.usecases.tune.board import board_request, board_runner
from bootscope.usecases.tune.request import TuneRequest
from bootscope.usecases.tune.screen import Runner
from bootscope.usecases.tune.ssh import ssh_request, ssh_runner


@dataclass(frozen=True, slots=True)
class MachineAdapter:
    """How ``tune`` reaches one kind of machine: ``baseline`` returns the request with the machine's
    own command line as its ``append``; ``runner`` boots a plan's arms on it."""

    baseline: Callable[[TuneRequest], TuneRequest]
    runner: Callable[[TuneRequest, Store, Reporter | None], Runner]


ADAPTERS: dict[str, MachineAdapter] = {
    LABGRID: MachineAdapter(board_request, board_runner),
    LIBVIRT: MachineAdapter(board_request, board_runner),
    SSH: MachineAdapter(ssh_request, ssh_runner),
}


def adapter_for(request: TuneRequest) -> MachineAdapter:
    """Return the adapter of the machine ``request`` tunes; raises InputError for a kind ``tune``
    does not reboot (``local``: this host is never rebooted by a tune)."""
    assert request.where is not None
    adapter = ADAPTERS.get(request.where.kind)
    if adapter is None:
        raise InputError(f"tune {request.where.address}: a {request.where.kind} target is not tuned")
    return adapter

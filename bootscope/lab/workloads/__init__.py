"""Workloads: what one slot measures (a QEMU boot, a kexec chain, an SSH reboot, a latency run, a
board's boot from power-on).

Each workload implements :class:`bootscope.lab.workloads.protocol.Workload`; this package's face is
its registry: :func:`workload_from_document` reads a stored plan back (``--resume``) by the workload's
kind name, which never changes once stored.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from bootscope.lab.workloads.protocol import Workload

WorkloadFactory = Callable[[Mapping[str, Any]], Workload]


def workload_from_document(document: Mapping[str, Any]) -> Workload:
    """Return the workload that a stored plan document describes (for ``--resume``).

    Raises InputError if the document names no known workload or cannot be read."""
    # Imported here: each workload brings its own machinery (SSH, Dask-free latency tools...), and
    # a command that runs one workload should not import the others.
    from bootscope.errors import InputError
    from bootscope.lab.workloads.board import BoardWorkload
    from bootscope.lab.workloads.boot import BootWorkload
    from bootscope.lab.workloads.kexec import KexecWorkload
    from bootscope.lab.workloads.latency import LatencyWorkload
    from bootscope.lab.workloads.ssh import SshWorkload

    factories: dict[str, WorkloadFactory] = {
        BoardWorkload.kind: BoardWorkload.from_document,
        BootWorkload.kind: BootWorkload.from_document,
        KexecWorkload.kind: KexecWorkload.from_document,
        LatencyWorkload.kind: LatencyWorkload.from_document,
        SshWorkload.kind: SshWorkload.from_document,
    }
    kind = str(document.get("workload", BootWorkload.kind))
    if kind not in factories:
        raise InputError(f"the stored plan names workload {kind!r}, which this bootscope cannot run")
    return factories[kind](document)

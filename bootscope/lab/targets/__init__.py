"""Targets: where a workload measures (see :mod:`bootscope.lab.targets.base` for the capabilities).

This package's face opens the target a plan names: :func:`open_target` builds it from a stored
:class:`~bootscope.lab.targets.base.TargetSpec`, and :func:`target_for` picks, for a workload, the
target given (when it is the one the plan names, or the plan names none) or the one the plan names,
so that ``--resume`` and a remote worker reach the same machine as the run's start did.
"""

from __future__ import annotations

from pathlib import Path

from bootscope.lab.targets.base import Target, TargetSpec

LOCAL = "local"
LABGRID = "labgrid:"


def open_target(spec: TargetSpec) -> Target:
    """Return the target ``spec`` names: this host for ``local``, a labgrid board for
    ``labgrid:ENV[:TARGET]``, else the SSH machine of its URL. Raises InputError for a bad URL, a
    missing key or environment file."""
    if spec.where == LOCAL:
        from bootscope.lab.targets.localhost import LocalHost

        return LocalHost()
    if spec.where.startswith(LABGRID):
        from bootscope.lab.targets.labgrid_board import LabgridBoard

        return LabgridBoard(spec.where)
    # Imported here: a QEMU or local run never needs the SSH client side.
    from bootscope.lab.targets.ssh_client import parse_ssh_url
    from bootscope.lab.targets.ssh_machine import SshMachine

    address = parse_ssh_url(
        spec.where,
        Path(spec.identity) if spec.identity else None,
        Path(spec.known_hosts) if spec.known_hosts else None,
    )
    return SshMachine(address, spec.console)


def target_for(spec: TargetSpec | None, given: Target) -> Target:
    """Return where a plan that names ``spec`` runs: ``given`` when the plan names no place (a QEMU
    plan: any target that boots guests) or ``given`` is that place (its name is the plan's, e.g. a
    test's fake machine), else the target :func:`open_target` opens. Raises like it."""
    if spec is None or given.name == spec.where:
        return given
    return open_target(spec)


def close_opened(target: Target, given: Target) -> None:
    """Close ``target`` when :func:`target_for` opened it (it is not ``given``) and it has something
    to let go of (a labgrid board: its power and its places); a given target is its owner's to close."""
    if target is given:
        return
    close = getattr(target, "close", None)
    if callable(close):
        close()

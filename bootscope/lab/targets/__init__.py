"""Targets: where a workload measures (see :mod:`bootscope.lab.targets.base` for the capabilities).

This package's face opens the target a plan names: :func:`open_target` builds it from the plan's
:class:`~bootscope.lab.where.Where` through the registry of kinds (:data:`bootscope.lab.where.KINDS`),
and :func:`target_for` picks, for a workload, the target given (when it is the place the plan names,
or any target that boots guests for a QEMU plan) or the one the plan names, so that ``--resume`` and
a remote worker reach the same machine as the run's start did, and no caller hands the runner a
placeholder.
"""

from __future__ import annotations

from typing import cast

from bootscope.errors import InputError
from bootscope.lab.targets.base import Target
from bootscope.lab.targets.checks import Check
from bootscope.lab.where import KINDS, QEMU, Where, kind_hook, kind_named, open_where


def open_target(where: Where) -> Target:
    """Return the target ``where`` names, opened by its kind's module: this host's QEMU, this host,
    an SSH machine, a labgrid board. Raises InputError for a bad address or a missing key or
    environment file, BootError for files a board asks for that cannot be provided."""
    return cast(Target, open_where(where))


def target_for(where: Where, given: Target | None) -> Target:
    """Return where a plan that names ``where`` runs: ``given`` when it is that place (its name is
    the plan's address, e.g. a test's fake machine) or the plan boots guests (any target that boots
    them: a test's fake QEMU), else the target :func:`open_target` opens. Raises like it."""
    if given is not None and (where.kind == QEMU or given.name == where.address):
        return given
    return open_target(where)


def close_opened(target: Target, given: Target | None) -> None:
    """Close ``target`` when :func:`target_for` opened it (it is not ``given``) and it has something
    to let go of (a labgrid board: its power and its places); a given target is its owner's to close."""
    if target is given:
        return
    close = getattr(target, "close", None)
    if callable(close):
        close()


def check_machine(where: Where, local_machine_id: str | None) -> list[Check]:
    """Return the checks of the machine ``where`` names (``target check``), by its kind's
    ``check_machine`` hook (``local_machine_id``: this host's, so that an SSH machine that is this one
    is said). Raises InputError for a kind that has no checks, BootError where the kind's checks do."""
    hook = kind_hook(kind_named(where.kind), "check_machine")
    if hook is None:
        known = " or ".join(k.shape for k in KINDS if kind_hook(k, "check_machine") is not None)
        raise InputError(f"target check: a {where.kind} target is not a machine it checks; give {known}")
    checks: list[Check] = hook(where, local_machine_id)
    return checks

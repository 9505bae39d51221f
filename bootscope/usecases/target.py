"""The target check use case: ``bootscope target check TARGET``: can this machine be measured?

:func:`check_target_text` parses TARGET once (:func:`bootscope.lab.where.parse_where`) and asks its
kind for its checks (an SSH machine's facts read once, a libvirt domain's definition); the front end
renders them (:mod:`bootscope.report.target_out`) and exits 1 when one is bad.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bootscope.lab.targets import check_machine
from bootscope.lab.targets.checks import BAD, Check
from bootscope.lab.where import parse_where
from bootscope.lab.workloads.ssh import read_local_machine_id


@dataclass(frozen=True, slots=True)
class TargetCheck:
    """The checks of the machine at ``url`` (first: it answered)."""

    url: str
    checks: tuple[Check, ...]

    @property
    def bad(self) -> tuple[str, ...]:
        """The names of the checks that are bad (the command then exits 1)."""
        return tuple(check.name for check in self.checks if check.status == BAD)


def check_target_text(target: str, identity: Path | None, known_hosts: Path | None) -> TargetCheck:
    """Return the checks of the machine ``target`` names (``ssh://USER@HOST[:PORT]``,
    ``libvirt:NAME``). Raises InputError for a bad address, key file or a kind with no checks,
    BootError when SSH refuses it or it does not answer."""
    where = parse_where(target, identity, known_hosts)
    return TargetCheck(where.address, tuple(check_machine(where, read_local_machine_id())))

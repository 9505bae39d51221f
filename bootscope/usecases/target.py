"""The target check use case: ``bootscope target check ssh://...``: can this machine be measured?

:func:`check_machine` reads the machine's facts once (the one reader,
:func:`bootscope.lab.targets.ssh_check.read_machine_facts`) and returns its checks; the front end
renders them (:mod:`bootscope.report.target_out`) and exits 1 when one is bad.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bootscope.lab.targets.ssh_check import BAD, Check, check_target
from bootscope.lab.targets.ssh_client import parse_ssh_url
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


def check_machine(target: str, identity: Path | None, known_hosts: Path | None) -> TargetCheck:
    """Return the checks of the machine ``target`` names (``ssh://USER@HOST[:PORT]``). Raises
    InputError for a bad URL or key file, BootError when SSH refuses it or it does not answer."""
    address = parse_ssh_url(target, identity, known_hosts)
    return TargetCheck(address.url, tuple(check_target(address, read_local_machine_id())))

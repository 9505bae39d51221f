"""The SSH kind: a machine reached over SSH (``ssh://USER@HOST[:PORT]``), which runs commands and
reboots (kexec or its firmware), its console read by a command when one is given. Its row in
:data:`bootscope.lab.where.KINDS` names this package; these are its hooks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from bootscope.lab.targets.checks import Check
from bootscope.lab.targets.ssh.check import check_target
from bootscope.lab.targets.ssh.client import SshAddress, parse_ssh_url
from bootscope.lab.targets.ssh.machine import SshMachine
from bootscope.lab.where import Where


def _address(where: Where) -> SshAddress:
    return parse_ssh_url(
        where.address,
        Path(where.identity) if where.identity else None,
        Path(where.known_hosts) if where.known_hosts else None,
    )


def check_where(where: Where) -> Where:
    """Return ``where`` with its URL written as stored (``ssh://USER@HOST[:PORT]``) and its key and
    known_hosts files made absolute; raises InputError for a bad URL or a missing file."""
    address = _address(where)
    return replace(
        where,
        address=address.url,
        identity=str(address.identity) if address.identity else None,
        known_hosts=str(address.known_hosts) if address.known_hosts else None,
    )


def open_where(where: Where) -> SshMachine:
    """Return the machine ``where`` names, its console read by ``where.console`` (if any); raises
    InputError for a bad URL or a missing file."""
    return SshMachine(_address(where), where.console)


def check_machine(where: Where, local_machine_id: str | None) -> list[Check]:
    """Return the checks of the machine ``where`` names (see :mod:`bootscope.lab.targets.ssh.check`);
    raises InputError for a bad URL or key file, BootError when SSH refuses it or it does not answer."""
    return check_target(_address(where), local_machine_id)

"""The libvirt kind: a domain the user defined (``libvirt:NAME[?connect=URI]``), booted cold (start,
destroy), warm and by kexec (ordered on its console's shell), its serial console read from power-on.
Its row in :data:`bootscope.lab.where.KINDS` names this package; these are its hooks."""

from __future__ import annotations

from dataclasses import replace

from bootscope.lab.targets.checks import Check
from bootscope.lab.targets.libvirt.address import parse_domain, stored_domain
from bootscope.lab.targets.libvirt.domain import LibvirtDomain
from bootscope.lab.where import Where


def check_where(where: Where) -> Where:
    """Return ``where`` with the domain's connection written out (see :func:`stored_domain`); raises
    InputError for a bad name or URI."""
    return replace(where, address=stored_domain(where.address).url)


def open_where(where: Where) -> LibvirtDomain:
    """Return the domain ``where`` names (connected on first use); raises InputError for a bad name."""
    return LibvirtDomain(parse_domain(where.address))


def check_machine(where: Where, local_machine_id: str | None) -> list[Check]:
    """Return the checks of the domain ``where`` names (see :mod:`.checks`)."""
    from bootscope.lab.targets.libvirt.checks import check_domain

    return check_domain(parse_domain(where.address))

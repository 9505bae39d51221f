"""The address of a libvirt domain: ``libvirt:NAME`` (the connection libvirt's own tools make:
``LIBVIRT_DEFAULT_URI``, else libvirt's default) or ``libvirt:NAME?connect=URI``."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from bootscope.errors import InputError
from bootscope.lab.where import LIBVIRT, kind_named, kind_of

SCHEME = kind_named(LIBVIRT).scheme
CONNECT = "?connect="
_NAME_RE = re.compile(r"^[^/\s?]{1,200}$")
_URI_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:/{1,3}[^\s]*$")


@dataclass(frozen=True, slots=True)
class DomainSpec:
    """A domain's ``name`` and the libvirt ``uri`` it is reached through (None: libvirt's default)."""

    name: str
    uri: str | None = None

    @property
    def url(self) -> str:
        """The domain as bootscope names and stores it."""
        return f"{SCHEME}{self.name}" + (f"{CONNECT}{self.uri}" if self.uri else "")


def parse_domain(text: str) -> DomainSpec:
    """Return the domain ``libvirt:NAME[?connect=URI]`` names. Raises InputError for another
    scheme, an empty or bad name (no ``/``, spaces or ``?``), or a bad URI."""
    if kind_of(text).name != LIBVIRT:
        raise InputError(f"{text!r} is not a libvirt domain: give libvirt:NAME[?connect=URI]")
    name, _, uri = text.removeprefix(SCHEME).partition(CONNECT)
    if not _NAME_RE.match(name):
        raise InputError(f"{text!r}: give the domain's name, libvirt:NAME (as `virsh list --all` shows it)")
    if CONNECT in text and not _URI_RE.match(uri):
        raise InputError(f"{text!r}: bad URI after ?connect= (e.g. qemu:///system)")
    return DomainSpec(name, uri or None)


def stored_domain(text: str) -> DomainSpec:
    """Return the domain ``text`` names with the connection written out: ``LIBVIRT_DEFAULT_URI`` when
    the text names none and it is set, so that ``--resume`` reaches the same daemon from anywhere."""
    spec = parse_domain(text)
    if spec.uri is None and os.environ.get("LIBVIRT_DEFAULT_URI"):
        return DomainSpec(spec.name, os.environ["LIBVIRT_DEFAULT_URI"])
    return spec

"""Where a run measures: the TARGET text parsed once into one typed :class:`Where`, through one table
of kinds (:data:`KINDS`).

A kind of machine is a plug-in: one row here (its name, how its TARGET text begins, what it can be
asked for) naming the module that implements it. That module gives two functions,
``check_where(where) -> Where`` (the address checked and written the way it is stored: an SSH URL
with its key files made absolute, a labgrid environment's absolute path) and
``open_where(where) -> Target`` (the target that measures there). Nothing else in bootscope looks at
how a TARGET text begins: every verb asks :func:`kind_of` or reads ``Where.kind``.

The kinds today: ``local`` (this host runs the tools), ``ssh://USER@HOST[:PORT]`` (a machine reached
over SSH), ``labgrid:ENV.yaml[:TARGET]`` (a board whose power labgrid switches),
``libvirt:NAME[?connect=URI]`` (a domain a libvirt daemon runs) and ``qemu`` (anything else: a kernel
booted in a QEMU guest on this host, ``debian:cloud`` or a path).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bootscope.errors import InputError

QEMU = "qemu"
LOCAL = "local"
SSH = "ssh"
LABGRID = "labgrid"
LIBVIRT = "libvirt"

# The one address of the QEMU kind as a place: this host's QEMU (the target's own name).
QEMU_HERE = "local-qemu"


@dataclass(frozen=True, slots=True)
class Kind:
    """One kind of machine: its ``name``; ``scheme``, how its TARGET text begins (``exact``: the whole
    text is the scheme, as ``local``; "" matches anything, the QEMU kind's kernel specs); ``shape``, the
    TARGET text a user writes (for help and errors); ``module``, the module that checks and opens it;
    ``runs_tools``, True when the machine runs a measuring tool itself (``latency run`` there, not in
    a guest); ``reboots``, the ways ``run --reboot`` may boot it again (empty: it is not rebooted);
    ``tune_reboots``, the ways each arm of a ``tune`` may boot its own command line (empty: not
    tuned as a machine); ``takes_keys``: its address takes ``--identity``/``--known-hosts``/a console
    command."""

    name: str
    scheme: str
    shape: str
    module: str
    runs_tools: bool = False
    reboots: tuple[str, ...] = ()
    tune_reboots: tuple[str, ...] = ()
    exact: bool = False
    takes_keys: bool = False

    def matches(self, text: str) -> bool:
        """Return True when TARGET ``text`` is of this kind."""
        return text == self.scheme if self.exact else text.startswith(self.scheme)

    @property
    def machine(self) -> bool:
        """True when the kind is a machine of its own (not a guest this host boots)."""
        return self.name != QEMU


# The registry: most specific first; the QEMU kind's empty scheme takes whatever no other kind does.
KINDS: tuple[Kind, ...] = (
    Kind(LOCAL, "local", "local", "bootscope.lab.targets.localhost", runs_tools=True, exact=True),
    Kind(
        SSH,
        "ssh://",
        "ssh://USER@HOST[:PORT]",
        "bootscope.lab.targets.ssh",
        runs_tools=True,
        reboots=("kexec", "reboot"),
        tune_reboots=("kexec",),
        takes_keys=True,
    ),
    Kind(
        LABGRID,
        "labgrid:",
        "labgrid:ENV.yaml[:TARGET]",
        "bootscope.lab.targets.labgrid",
        runs_tools=True,
        reboots=("cold", "warm", "kexec"),
        tune_reboots=("kexec", "cold"),
    ),
    Kind(
        LIBVIRT,
        "libvirt:",
        "libvirt:NAME[?connect=URI]",
        "bootscope.lab.targets.libvirt",
        runs_tools=True,
        reboots=("cold", "warm", "kexec"),
        tune_reboots=("kexec", "cold"),
    ),
    Kind(QEMU, "", "a kernel (debian:cloud, a path)", "bootscope.lab.targets.qemu"),
)


def kind_of(text: str) -> Kind:
    """Return the kind TARGET ``text`` names (the QEMU kind for a kernel spec): the one place a
    TARGET's scheme is looked at."""
    return next(kind for kind in KINDS if kind.matches(text))


def kind_named(name: str) -> Kind:
    """Return the kind called ``name``; raises InputError for a name no row has."""
    for kind in KINDS:
        if kind.name == name:
            return kind
    raise InputError(f"no kind of machine {name!r} (known: {', '.join(k.name for k in KINDS)})")


@dataclass(frozen=True, slots=True)
class Where:
    """A place a run measures, as parsed once from TARGET and stored with the plan: its ``kind`` (a
    :data:`KINDS` name), its ``address`` (the TARGET text as stored: an SSH URL, ``labgrid:ENV:TARGET``
    with the environment's absolute path, ``local``, or for QEMU :data:`QEMU_HERE`), the private key
    ``identity`` and the ``known_hosts`` file (absolute; an SSH machine's) and the ``console`` command
    that reads its serial console (None: not read)."""

    kind: str
    address: str
    identity: str | None = None
    known_hosts: str | None = None
    console: str | None = None


QEMU_PLACE = Where(QEMU, QEMU_HERE)


def parse_where(
    text: str,
    identity: str | Path | None = None,
    known_hosts: str | Path | None = None,
    console: str | None = None,
) -> Where:
    """Return the place TARGET ``text`` names, checked and written as stored by its kind's module's
    ``check_where`` (``identity``, ``known_hosts``: paths, checked and made absolute where the kind
    takes keys). Raises InputError for a bad address or a missing file, and for keys or a console
    given to a kind that takes none."""
    kind = kind_of(text)
    if not kind.takes_keys and (identity or known_hosts or console):
        raise InputError(f"--identity, --known-hosts and a console command are for {_keyed_shapes()}")
    where = Where(kind.name, text, _path_text(identity), _path_text(known_hosts), console)
    checked: Where = _hook(kind, "check_where")(where)
    return checked


def _path_text(path: str | Path | None) -> str | None:
    return str(path) if path else None


def stored_where(
    text: str, identity: str | None = None, known_hosts: str | None = None, console: str | None = None
) -> Where:
    """Return the place a stored plan names (already checked when the run started: nothing is read
    from disk, so a run resumes where its files moved no further than its plan says)."""
    kind = kind_of(text)
    return Where(kind.name, QEMU_HERE if kind.name == QEMU else text, identity, known_hosts, console)


def open_where(where: Where) -> Any:
    """Return the target that measures at ``where`` (its kind module's ``open_where``). Raises like
    that module (InputError for a bad address or a missing file, BootError for a machine that cannot
    be reached)."""
    return _hook(kind_named(where.kind), "open_where")(where)


def kind_hook(kind: Kind, name: str) -> Callable[..., Any] | None:
    """Return the function ``name`` of ``kind``'s module, None where it has none (imported only when
    asked: a QEMU run never loads the SSH client, labgrid or libvirt)."""
    module = importlib.import_module(kind.module)
    hook: Callable[..., Any] | None = getattr(module, name, None)
    return hook


def _hook(kind: Kind, name: str) -> Callable[..., Any]:
    hook = kind_hook(kind, name)
    assert hook is not None, f"the {kind.name} kind's module has no {name}"
    return hook


def _keyed_shapes() -> str:
    return " or ".join(kind.shape for kind in KINDS if kind.takes_keys)

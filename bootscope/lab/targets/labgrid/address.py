"""The address of a labgrid board: ``labgrid:ENV.yaml[:TARGET]``, the environment file and the target
in it (``main`` by default), named by the file's absolute path once checked."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bootscope.errors import InputError
from bootscope.lab.where import LABGRID, kind_named, kind_of

LABGRID_PREFIX = kind_named(LABGRID).scheme
DEFAULT_TARGET = "main"


@dataclass(frozen=True, slots=True)
class BoardSpec:
    """Where a board is: its labgrid environment file (absolute) and the target in it."""

    env: Path
    target: str

    @property
    def url(self) -> str:
        """The board as bootscope names it: ``labgrid:ENV:TARGET``."""
        return f"{LABGRID_PREFIX}{self.env}:{self.target}"


def parse_board(text: str) -> BoardSpec:
    """Return the board ``labgrid:ENV.yaml[:TARGET]`` names (TARGET defaults to ``main``). Raises
    InputError for another scheme, a missing environment file or an empty target name."""
    if kind_of(text).name != LABGRID:
        raise InputError(f"{text!r} is not a labgrid board: give labgrid:ENV.yaml[:TARGET]")
    rest = text.removeprefix(LABGRID_PREFIX)
    path, target = rest, DEFAULT_TARGET
    if not Path(rest).is_file() and ":" in rest:
        path, target = rest.rsplit(":", 1)
    env = Path(path).expanduser()
    if not env.is_file():
        raise InputError(f"labgrid: no environment file {path!r}")
    if not target.strip():
        raise InputError(f"labgrid: {text!r} names no target after the last ':'")
    return BoardSpec(env.resolve(), target)

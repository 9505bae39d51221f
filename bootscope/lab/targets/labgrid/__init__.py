"""The labgrid kind: a board whose power and console labgrid drives (``labgrid:ENV.yaml[:TARGET]``),
booted from power-on and rebooted warm and by kexec through its shell. Its row in
:data:`bootscope.lab.where.KINDS` names this package; these are its hooks."""

from __future__ import annotations

from dataclasses import replace

from bootscope.lab.targets.labgrid.address import parse_board
from bootscope.lab.targets.labgrid.board import LabgridBoard
from bootscope.lab.where import Where


def check_where(where: Where) -> Where:
    """Return ``where`` with the board named by its environment's absolute path
    (``labgrid:ENV:TARGET``: ``--resume`` finds it from anywhere); raises InputError for a missing
    environment file or an empty target name."""
    return replace(where, address=parse_board(where.address).url)


def open_where(where: Where) -> LabgridBoard:
    """Return the board ``where`` names, the files its environment asks bootscope for provided first
    (:func:`bootscope.lab.targets.labgrid.examples.provide_example_paths`); raises InputError for a
    bad board, BootError when a file it asks for cannot be fetched or built."""
    from bootscope.lab.targets.labgrid.examples import provide_example_paths

    provide_example_paths(where.address)
    return LabgridBoard(where.address)

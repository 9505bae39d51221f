"""A cold boot's command line on a labgrid board whose power driver starts the kernel itself.

labgrid's QEMU driver boots its ``kernel`` with ``boot_args`` (QEMU's ``-append``), read when the
driver is activated: the driver is deactivated, given the variant's command line and activated
again, while the board is off. A board whose power driver only switches power boots what its boot
loader says (U-Boot's ``bootargs``): a variant's command line goes to U-Boot's prompt where the
target has a ``UBootDriver`` (:mod:`bootscope.lab.targets.labgrid.uboot`), and is refused in one
line, before the board is switched on, where it has none.
"""

from __future__ import annotations

from typing import Any

from bootscope.errors import BootError
from bootscope.lab.reboot_variant import BoardVariant
from bootscope.lab.targets.shell_ops import one_line


def own_boot_args(driver: Any) -> str | None:
    """Return the command line ``driver`` boots its kernel with as its environment configured it
    (None when the driver starts no kernel itself: a power switch, or labgrid's QEMU driver booting
    a boot loader as its firmware, which ignores ``boot_args``)."""
    if not hasattr(driver, "boot_args") or not getattr(driver, "kernel", None):
        return None
    return str(driver.boot_args or "")


def check_boot_args(driver: Any, own: str | None, name: str) -> None:
    """Raise BootError in one line when the power driver ``driver`` of labgrid target ``name`` starts
    no kernel of its own (``own`` None: see :func:`own_boot_args`)."""
    if own is None:
        raise BootError(
            f"labgrid: target {name!r}: its power driver {type(driver).__name__} does not start the"
            " kernel, so a cold boot cannot be given a command line (its boot loader's bootargs"
            " decide): give the target a UBootDriver (bootscope sets bootargs at its prompt), or use"
            " reboot=kexec"
        )


def set_boot_args(
    target: Any, drivers: tuple[Any, Any], own: str | None, variant: BoardVariant | None, name: str
) -> None:
    """Give the power driver of labgrid target ``target`` (named ``name``; ``drivers``: its power and
    console drivers) the command line ``variant`` makes of the board's own ``own`` (the board's own
    for None or a variant without words), re-activating the driver and the console only when it
    changes. Raises BootError when the variant has words and the driver starts no kernel (``own``
    None), or labgrid cannot re-activate it."""
    driver, console = drivers
    if own is None:
        if variant is not None and variant.has_words:
            check_boot_args(driver, own, name)
        return
    wanted = variant.command_line(own) if variant is not None else own
    if str(driver.boot_args or "") == wanted:
        return
    try:
        target.deactivate(driver)
        driver.boot_args = wanted
        target.activate(driver)
        target.activate(console)  # labgrid deactivated it with its supplier, where they differ
    except Exception as error:  # labgrid raises its own errors on activation
        raise BootError(f"labgrid: target {name!r}: cannot set its command line: {one_line(error)}") from None

"""The shell commands that reboot a machine: load a kernel with kexec-tools, order a reboot. One text
for every shell bootscope reboots through (a machine over SSH, a labgrid board's shell)."""

from __future__ import annotations

import shlex

from bootscope.lab.reboot_variant import REBOOT_KEXEC


def kexec_load_command(
    kernel: str | None, initrd: str | None, cmdline_word: str, no_checks: bool, root: str
) -> str:
    """Return the shell command that loads ``kernel`` (default: the running kernel's file in /boot)
    with ``initrd`` (default: the running kernel's in /boot, only where it exists) and the command
    line ``cmdline_word`` (one shell word, quoted or an expansion); ``no_checks`` adds ``-i``."""
    kernel_word = shlex.quote(kernel) if kernel else '"/boot/vmlinuz-$(uname -r)"'
    initrd_word = shlex.quote(initrd) if initrd else '"/boot/initrd.img-$(uname -r)"'
    use_initrd = "true" if initrd else '[ -e "$i" ]'
    checks = " -i" if no_checks else ""
    return (
        f'k={kernel_word}; i={initrd_word}; set --; if {use_initrd}; then set -- --initrd="$i"; fi; '
        f'{root}kexec -l "$k" "$@" --command-line={cmdline_word}{checks}'
    )


def order_command(reboot: str, root: str) -> str:
    """Return the shell command that orders the reboot and returns at once: systemd's clean
    ``kexec``/``reboot`` where systemd runs, else ``kexec -e``/``reboot`` a second later."""
    verb, bare = ("kexec", "kexec -e") if reboot == REBOOT_KEXEC else ("reboot", "reboot")
    return (
        f"if [ -d /run/systemd/system ]; then {root}systemctl --no-block {verb}; "
        f"else {root}sh -c 'nohup sh -c \"sleep 1; {bare}\" >/dev/null 2>&1 &'; fi"
    )


def console_order(reboot: str, root: str) -> str:
    """Return the reboot order typed on a console's shell (not waited for: the shell goes down with
    the system): systemd's ``kexec`` where systemd runs, else ``kexec -e``; ``reboot`` for a warm one."""
    if reboot == REBOOT_KEXEC:
        return f"if [ -d /run/systemd/system ]; then {root}systemctl kexec; else {root}kexec -e; fi"
    return f"{root}reboot"

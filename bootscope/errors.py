"""One exception type per stage; the CLI turns each into one line on stderr and an exit code.

Exit codes (documented in README.md):
  0 success, 1 a comparison or check said "bad"/failed, 2 usage or bad input,
  3 a boot or QEMU failure, 4 a store (database) failure, 5 a log that cannot be timed.
"""

from __future__ import annotations


class BootscopeError(Exception):
    """Base of every error that the CLI reports as one line; ``exit_code`` is the process exit code."""

    exit_code = 2


class InputError(BootscopeError):
    """A file, option or value the user gave cannot be used."""

    exit_code = 2


class ParseError(BootscopeError):
    """A log cannot be read or timed."""

    exit_code = 5


class BootError(BootscopeError):
    """A kernel could not be booted (no QEMU, no kernel, no busybox, ...)."""

    exit_code = 3


class StoreError(BootscopeError):
    """The database cannot be opened, read or written."""

    exit_code = 4


class StatsError(BootscopeError):
    """A comparison cannot be computed from the samples given."""

    exit_code = 2

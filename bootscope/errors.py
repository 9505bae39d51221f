"""One exception type per stage; the CLI turns each into one line on stderr and an exit code.

Exit codes (documented in README.md):
  0 success, 1 a comparison or check said "bad"/failed, 2 usage or bad input (a store, run or boot
  named that is not there included), 3 a boot or QEMU failure, 4 a store (database) failure, 5 a log
  that cannot be timed; ``check`` adds 125 "cannot tell" (its result carries it, no exception).
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


class StoreLookupError(StoreError):
    """What the user named is not in the store: no store at a path, no such run, variant or boot.
    Bad input (exit 2), not a failed database; a StoreError still, for code that catches those."""

    exit_code = 2

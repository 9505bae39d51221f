"""A machine reached with the system's OpenSSH client: its address, and one command run on it.

Only keys are used (``BatchMode=yes``: ssh never asks for a password or a passphrase, so none is
ever typed, stored or logged), and host keys are checked as OpenSSH checks them
(``StrictHostKeyChecking=yes`` against ``~/.ssh/known_hosts`` or the file given): an unknown or
changed host key is refused with one clear line. bootscope speaks no SSH itself; every command is
one ``ssh`` process, so the user's own ``~/.ssh/config`` (ProxyJump, ports, keys) applies.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from bootscope.errors import BootError, InputError
from bootscope.lab.targets.base import ShellResult
from bootscope.lab.where import SSH, kind_named, kind_of

SCHEME = kind_named(SSH).scheme
# ssh's own exit status when it (not the remote command) failed: no connection, no authentication.
SSH_FAILED = 255
_USER_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
_HOST_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,253}$")
_HOST_KEY_CHANGED = "REMOTE HOST IDENTIFICATION HAS CHANGED"
_HOST_KEY_UNKNOWN = "host key is known for"
_HOST_KEY_FAILED = "Host key verification failed"
_AUTH_FAILED = "Permission denied"


@dataclass(frozen=True, slots=True)
class SshAddress:
    """Where a machine answers SSH and how to log in: ``user``, ``host``, ``port`` (None: ssh's own
    default or the user's ssh config), the private key ``identity`` (None: ssh-agent and the user's
    keys) and the ``known_hosts`` file (None: ``~/.ssh/known_hosts``)."""

    user: str
    host: str
    port: int | None = None
    identity: Path | None = None
    known_hosts: Path | None = None

    @property
    def url(self) -> str:
        """The address as ``ssh://USER@HOST[:PORT]``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{SCHEME}{self.user}@{host}" + (f":{self.port}" if self.port is not None else "")


def is_ssh_url(text: str | None) -> bool:
    """Return True if ``text`` names an SSH target (``ssh://...``): its kind is the SSH row's."""
    return text is not None and kind_of(text).name == SSH


def parse_ssh_url(text: str, identity: Path | None = None, known_hosts: Path | None = None) -> SshAddress:
    """Return the address ``ssh://USER@HOST[:PORT]`` names (an IPv6 host in brackets), with the key
    and known-hosts files given. Raises InputError for anything else: no user (bootscope never
    guesses whom to log in as), a password in the URL, a path, a bad port, a missing key file."""
    if not is_ssh_url(text):
        raise InputError(f"{text!r} is not an SSH target: use ssh://USER@HOST[:PORT]")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as error:
        raise InputError(f"{text!r}: {error}") from None
    if parts.password is not None:
        raise InputError(f"{text!r}: no password in the URL; bootscope logs in with keys only")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise InputError(f"{text!r}: give ssh://USER@HOST[:PORT] and nothing after it")
    user = unquote(parts.username or "")
    host = parts.hostname or ""
    if not user or not _USER_RE.match(user):
        raise InputError(f"{text!r}: give the user to log in as, ssh://USER@HOST")
    if not host or not _HOST_RE.match(host):
        raise InputError(f"{text!r}: bad host name")
    if port is not None and not 0 < port < 65536:
        raise InputError(f"{text!r}: bad port {port}")
    for option, path in (("--identity", identity), ("--known-hosts", known_hosts)):
        if path is not None and not path.expanduser().is_file():
            raise InputError(f"{option} {path}: no such file")
    return SshAddress(
        user=user,
        host=host,
        port=port,
        identity=identity.expanduser().resolve() if identity is not None else None,
        known_hosts=known_hosts.expanduser().resolve() if known_hosts is not None else None,
    )


def ssh_argv(address: SshAddress, command: str, connect_timeout_s: float = 10.0) -> list[str]:
    """Return the ssh client's argv that runs ``command`` (one shell string) on ``address``: keys
    only, no prompt of any kind, strict host key checking, no forwarding, no terminal."""
    argv = [
        "ssh",
        "-o",
        "BatchMode=yes",
        "-o",
        "StrictHostKeyChecking=yes",
        "-o",
        "PasswordAuthentication=no",
        "-o",
        "KbdInteractiveAuthentication=no",
        "-o",
        f"ConnectTimeout={max(1, round(connect_timeout_s))}",
        "-o",
        "ServerAliveInterval=5",
        "-o",
        "ServerAliveCountMax=2",
        "-o",
        "ForwardAgent=no",
        "-o",
        "ForwardX11=no",
        "-o",
        "ClearAllForwardings=yes",
        "-o",
        "LogLevel=ERROR",
        "-T",
    ]
    if address.known_hosts is not None:
        argv += ["-o", f"UserKnownHostsFile={address.known_hosts}", "-o", "GlobalKnownHostsFile=/dev/null"]
    if address.identity is not None:
        argv += ["-o", "IdentitiesOnly=yes", "-i", str(address.identity)]
    if address.port is not None:
        argv += ["-p", str(address.port)]
    return [*argv, "--", f"{address.user}@{address.host}", command]


def run_ssh(
    address: SshAddress, command: str, timeout_s: float, connect_timeout_s: float | None = None
) -> ShellResult:
    """Run ``command`` on ``address`` and return how it ended; a command still running after
    ``timeout_s`` is killed and ends with status 255 and "timed out" in ``stderr``. Raises BootError
    only when there is no ssh client at all."""
    if shutil.which("ssh") is None:
        raise BootError("ssh not found: install the OpenSSH client (Debian's openssh-client)")
    argv = ssh_argv(address, command, connect_timeout_s if connect_timeout_s is not None else timeout_s)
    started_ns = time.monotonic_ns()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        process_group=0,  # Ctrl-C reaches bootscope, which decides when a command stops
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
        returncode = proc.returncode
    except subprocess.TimeoutExpired:
        _kill(proc)
        stdout, stderr = proc.communicate()
        stderr += f"\nssh: timed out after {timeout_s:g} s".encode()
        returncode = SSH_FAILED
    except BaseException:
        _kill(proc)
        raise
    return ShellResult(
        returncode=returncode,
        stdout=stdout.decode("utf-8", errors="replace"),
        stderr=stderr.decode("utf-8", errors="replace"),
        started_ns=started_ns,
        ended_ns=time.monotonic_ns(),
    )


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def refusal(result: ShellResult) -> str | None:
    """Return why ssh refused to go on, in one line, when retrying cannot help (a host key that is
    unknown or changed, a key the machine does not accept); None for anything else (the machine
    not answering, a command that failed)."""
    if result.returncode != SSH_FAILED:
        return None
    text = result.stderr
    if _HOST_KEY_CHANGED in text:
        return (
            "the machine's host key is not the one known_hosts holds (REMOTE HOST IDENTIFICATION HAS"
            " CHANGED): if the machine was reinstalled, remove the old key with ssh-keygen -R; bootscope"
            " never accepts a changed key"
        )
    if _HOST_KEY_UNKNOWN in text or _HOST_KEY_FAILED in text:
        return (
            "host key verification failed: the machine's host key is not in known_hosts (add it after"
            " checking it, e.g. ssh-keyscan, or give --known-hosts FILE)"
        )
    if _AUTH_FAILED in text:
        return "the machine refused the key (Permission denied): give --identity FILE or load it in ssh-agent"
    return None


def first_error_line(result: ShellResult) -> str:
    """Return the line of ssh's or the command's error output that says what went wrong."""
    lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
    return (lines[-1] if lines else f"exit status {result.returncode}")[:300]

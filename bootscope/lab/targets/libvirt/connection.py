"""A libvirt connection and a domain's serial console, through libvirt's own Python binding.

The connection goes where libvirt's own tools go: the URI the TARGET names (``?connect=URI``), else
``LIBVIRT_DEFAULT_URI``, else libvirt's default. The binding is imported when a domain is first
used: no other command pays for it. libvirt's event loop runs in one daemon thread per process (its
keep-alives and streams need one); libvirt's own error printer is silenced, since every failure
reaches the user as one line of ours.

The console is the stream ``virDomainOpenConsole`` gives: opened while the domain is paused, before
its first instruction, so that nothing it prints is lost; a thread reads it as bytes arrive, so a
reader waiting with a timeout (:class:`ConsoleStream.read`) sees them at once.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from typing import Any

from bootscope.errors import BootError
from bootscope.lab.targets.shell_ops import one_line

INSTALL_HINT = "apt-get install libvirt-dev pkg-config, then pip install libvirt-python"
_LOOP_LOCK = threading.Lock()
_loop_started = False


def binding() -> Any:
    """Return libvirt's Python module, its event loop running; raises BootError when it is not
    installed."""
    global _loop_started
    try:
        import libvirt
    except ImportError as error:
        raise BootError(f"the libvirt Python binding is not installed ({error}): {INSTALL_HINT}") from None
    with _LOOP_LOCK:
        if not _loop_started:
            libvirt.registerErrorHandler(lambda _context, _error: None, None)
            libvirt.virEventRegisterDefaultImpl()
            threading.Thread(target=_run_loop, args=(libvirt,), name="libvirt-events", daemon=True).start()
            _loop_started = True
    return libvirt


def _run_loop(libvirt: Any) -> None:
    while True:
        libvirt.virEventRunDefaultImpl()


def connect(uri: str | None) -> Any:
    """Return a read-write connection to ``uri`` (None: libvirt's default, ``LIBVIRT_DEFAULT_URI``
    first); raises BootError in one line when libvirt refuses it (no daemon, no permission)."""
    libvirt = binding()
    try:
        return libvirt.open(uri)
    except libvirt.libvirtError as error:
        raise BootError(f"libvirt: cannot connect to {uri or 'the default URI'}: {one_line(error)}") from None


class ConsoleStream:
    """The serial console of a domain as a console driver (``read(size, timeout)``, ``write``):
    bytes are read by a thread into a queue as they arrive; ``read`` hands back what came."""

    def __init__(self, connection: Any, domain: Any, name: str) -> None:
        libvirt = binding()
        self._name = name
        self._queue: queue.Queue[bytes | None] = queue.Queue()
        self._closed = False
        self._error = ""
        try:
            self._stream = connection.newStream(0)
            domain.openConsole(None, self._stream, libvirt.VIR_DOMAIN_CONSOLE_FORCE)
        except libvirt.libvirtError as error:
            raise BootError(f"libvirt: the console of {name!r}: {one_line(error)}") from None
        self._thread = threading.Thread(target=self._pump, name=f"console-{name}", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        try:
            while True:
                data = self._stream.recv(4096)
                if not isinstance(data, bytes) or not data:
                    break
                self._queue.put(data)
        except Exception as error:  # the domain went away: its stream ends with an error
            self._error = one_line(error)
        self._queue.put(None)

    def read(self, size: int = 4096, timeout: float = 0.2) -> bytes:
        """Return what the console printed, waiting up to ``timeout`` s for the first byte (b"" when
        nothing came or the console ended)."""
        try:
            first = self._queue.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return b""
        if first is None:
            self._queue.put(None)  # ended: every later read returns at once
            return b""
        chunks, taken = [first], len(first)
        while taken < size:
            try:
                more = self._queue.get_nowait()
            except queue.Empty:
                break
            if more is None:
                self._queue.put(None)
                break
            chunks.append(more)
            taken += len(more)
        return b"".join(chunks)

    def write(self, data: bytes) -> None:
        """Write ``data`` to the console; raises BootError when the stream is gone."""
        try:
            self._stream.send(data)
        except Exception as error:
            raise BootError(f"libvirt: the console of {self._name!r}: {one_line(error)}") from None

    def close(self) -> None:
        """Let the stream go (safe to call twice)."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            self._stream.abort()

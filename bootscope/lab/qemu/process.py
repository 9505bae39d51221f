"""Boot a kernel once in QEMU and time-stamp every serial line on the host as it arrives.

QEMU runs with no network device, no shared host directory and ``-no-reboot``; the guest's serial
console is QEMU's stdout (a pipe). Every line gets ``time.monotonic_ns()`` when its newline arrives.
QEMU lives in its own process group, dies with its parent (PR_SET_PDEATHSIG), and is killed and reaped
on every way out of ``boot_once``: the marker, a panic, the timeout, an exception, Ctrl-C.
"""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bootscope import defaults
from bootscope.errors import BootError, InputError
from bootscope.lab.child import start_child
from bootscope.lab.qemu.disk import DISK_ATTACHES, FORMAT_RE, disk_format, drive_option, nvdimm_options
from bootscope.lab.qemu.guest_clock import DEFAULT_RTC_BASE
from bootscope.model import Boot, LogLine, Outcome

# After a panic the kernel prints its trace and, with panic=-1, reboots at once (QEMU exits because of
# -no-reboot). If the command line keeps the guest hanging instead, stop waiting after this long.
PANIC_GRACE_S = 5.0
# An end line before the marker: an image's collector can finish before its getty prints the login
# prompt on a loaded host. The boot waits this much longer for the marker.
END_GRACE_S = 120.0
MAX_LINE_BYTES = 1 << 16  # a line longer than this (binary junk) is cut into pieces
_STDERR_TAIL_BYTES = 4096


@dataclass(frozen=True, slots=True)
class BootConfig:
    """How to boot once: the kernel, its command line, the machine and when to stop.

    ``marker_regex`` names the line that ends a successful boot; ``stop_on_marker`` kills QEMU as soon as
    it appears (else the guest powers off by itself). ``end_regex`` kills QEMU when a line matches it
    and the marker was seen (an end line first: QEMU is killed when the marker follows, or
    END_GRACE_S later, and the boot failed).
    ``cpu_affinity`` pins QEMU to those host CPUs. ``icount_shift`` makes guest time a function of
    instructions executed (TCG only, one vCPU); the guest's real-time clock then starts at ``rtc_base``
    (None: guest_clock.DEFAULT_RTC_BASE) and runs on the virtual clock, so that nothing of the host's
    time reaches the guest (unless ``extra_qemu_args`` sets ``-rtc`` itself). ``disk`` is the user's
    disk image, attached as ``disk_attach`` says: "virtio", a virtio disk with ``snapshot=on``, or
    "nvdimm", an emulated NVDIMM mapped privately (raw images only; see lab/qemu/disk.py), so the
    guest's writes never reach it either way; ``disk_format`` is its format (None: ask ``qemu-img``,
    or guess from the suffix, when the command is built).
    ``panic_regex`` names the console lines that mean the kernel died (the parse stage's pattern
    table has it; None: no panic detection), so the boot ends as ``panic`` at once.
    ``prompt_regex`` names a prompt (a getty's ``login: ``): prompts end no line, so the text up to
    the end of a match is a line of its own, stamped when the prompt arrives, not when some later
    output (a kernel message on the same console) ends the line.
    """

    kernel: Path
    initrd: Path | None
    append: str
    smp: int = defaults.DEFAULT_SMP
    mem_mb: int = defaults.DEFAULT_MEM_MB
    cpu: str | None = None
    accel: str = "tcg"
    icount_shift: int | None = None
    extra_qemu_args: tuple[str, ...] = ()
    timeout_s: float = defaults.BOOT_TIMEOUT_S
    marker_regex: str = defaults.MARKER_PREFIX
    stop_on_marker: bool = False
    qemu_binary: str = "qemu-system-x86_64"
    cpu_affinity: tuple[int, ...] | None = None
    end_regex: str | None = None
    disk: Path | None = None
    disk_format: str | None = None
    disk_attach: str = "virtio"
    panic_regex: str | None = None
    prompt_regex: str | None = None
    rtc_base: str | None = None


def kernel_cmdline(append: str) -> str:
    """Return ``append`` with ``console=ttyS0`` and ``panic=-1`` added where absent.

    The console must be the serial port (our pipe); ``panic=-1`` makes a panicking kernel reboot at
    once, which ``-no-reboot`` turns into QEMU exiting.
    """
    words = append.split()
    if not any(word.startswith("console=") for word in words):
        words.append("console=ttyS0")
    if not any(word.startswith("panic=") for word in words):
        words.append("panic=-1")
    return " ".join(words)


def validate(config: BootConfig) -> None:
    """Raise InputError for option combinations QEMU would reject or that measure nothing useful."""
    if config.accel not in ("tcg", "kvm"):
        raise InputError(f"accelerator must be tcg or kvm here, not {config.accel!r}")
    if config.smp < 1 or config.mem_mb < 16:
        raise InputError(f"need smp >= 1 and mem >= 16 MiB (got smp={config.smp}, mem={config.mem_mb})")
    if config.timeout_s <= 0:
        raise InputError(f"timeout must be positive (got {config.timeout_s})")
    if config.icount_shift is not None:
        if config.accel != "tcg":
            raise InputError("--icount needs --accel tcg: KVM runs guest code natively and cannot count it")
        if config.smp != 1:
            raise InputError("--icount needs --smp 1: QEMU's instruction counting runs one vCPU at a time")
        if not 0 <= config.icount_shift <= 10:
            raise InputError(f"icount shift must be 0..10 (got {config.icount_shift})")
    if config.disk_format is not None and not FORMAT_RE.match(config.disk_format):
        raise InputError(f"bad disk format {config.disk_format!r} (e.g. raw or qcow2)")
    if config.disk_attach not in DISK_ATTACHES:
        raise InputError(
            f"disk attach must be one of {', '.join(DISK_ATTACHES)} (got {config.disk_attach!r})"
        )
    if config.disk_attach == "nvdimm" and config.disk_format not in (None, "raw"):
        raise InputError(f"an NVDIMM maps the disk's bytes: it takes a raw image, not {config.disk_format}")
    for regex in (config.marker_regex, config.end_regex, config.prompt_regex):
        if regex is not None:
            try:
                re.compile(regex)
            except re.error as error:
                raise InputError(f"bad regex {regex!r}: {error}") from error


def build_command(config: BootConfig) -> list[str]:
    """Return QEMU's argv for ``config`` (no network, no shared directories, serial on stdout).

    Raises InputError for invalid combinations (see ``validate``); BootError if ``config.disk`` has
    no ``disk_format`` and cannot be inspected (see :func:`disk_format`).
    """
    validate(config)
    image_format = None
    if config.disk is not None:
        image_format = config.disk_format or disk_format(config.disk)
        if config.disk_attach == "nvdimm" and image_format != "raw":
            raise InputError(f"an NVDIMM maps the disk's bytes: it takes a raw image, not {image_format}")
    in_memory = config.disk is not None and config.disk_attach == "nvdimm"
    argv = [
        config.qemu_binary,
        "-accel",
        config.accel,
        *(() if in_memory else ("-m", str(config.mem_mb))),
        "-smp",
        str(config.smp),
        "-nographic",
        "-nodefaults",  # no default NIC, VGA, CD-ROM or monitor
        "-nic",
        "none",
        "-no-reboot",
        "-serial",
        "stdio",
        "-kernel",
        str(config.kernel),
    ]
    if config.cpu is not None:
        argv += ["-cpu", config.cpu]
    if config.icount_shift is not None:
        argv += ["-icount", f"shift={config.icount_shift},sleep=off"]
        if "-rtc" not in config.extra_qemu_args:
            argv += ["-rtc", f"base={config.rtc_base or DEFAULT_RTC_BASE},clock=vm"]
    if config.initrd is not None:
        argv += ["-initrd", str(config.initrd)]
    if config.disk is not None and in_memory:
        argv += nvdimm_options(config.disk, config.mem_mb)
    elif config.disk is not None and image_format is not None:
        argv += ["-drive", drive_option(config.disk, image_format)]
    argv += ["-append", kernel_cmdline(config.append), *config.extra_qemu_args]
    return argv


def _check_inputs(config: BootConfig) -> None:
    if shutil.which(config.qemu_binary) is None:
        raise BootError(f"QEMU not found: {config.qemu_binary} (install Debian's qemu-system-x86)")
    if not config.kernel.is_file():
        raise BootError(f"no such kernel: {config.kernel}")
    if config.initrd is not None and not config.initrd.is_file():
        raise BootError(f"no such initrd: {config.initrd}")
    if config.disk is not None and not config.disk.is_file():
        raise BootError(f"no such disk image: {config.disk}")
    if config.cpu_affinity:
        available = os.sched_getaffinity(0)
        missing = sorted(set(config.cpu_affinity) - available)
        if missing:
            raise InputError(f"cannot pin QEMU to CPUs {missing}: this process may use {sorted(available)}")


class LineSplitter:
    """Cuts a byte stream into lines, stamping each with the host time its end arrived; a match of
    ``prompt`` (bytes regex) ends a line too, right after the match."""

    def __init__(self, prompt: re.Pattern[bytes] | None = None) -> None:
        self._pending = b""
        self._prompt = prompt

    def feed(self, data: bytes, host_ns: int) -> list[LogLine]:
        """Return the lines ``data`` completes, each stamped ``host_ns`` (a line longer than
        MAX_LINE_BYTES is cut there)."""
        self._pending += data
        lines: list[LogLine] = []
        while True:
            cut = self._pending.find(b"\n")
            found = self._prompt.search(self._pending) if self._prompt is not None else None
            if found is not None and (cut < 0 or found.end() <= cut):
                lines.append(_line(self._pending[: found.end()], host_ns))
                self._pending = self._pending[found.end() :].removeprefix(b"\r").removeprefix(b"\n")
                continue
            if cut < 0:
                if len(self._pending) > MAX_LINE_BYTES:
                    cut = MAX_LINE_BYTES
                    lines.append(_line(self._pending[:cut], host_ns))
                    self._pending = self._pending[cut:]
                    continue
                return lines
            lines.append(_line(self._pending[:cut], host_ns))
            self._pending = self._pending[cut + 1 :]

    def flush(self, host_ns: int) -> list[LogLine]:
        """Return what is left as a last line (none when only blanks are left)."""
        rest, self._pending = self._pending, b""
        return [_line(rest, host_ns)] if rest.strip(b"\r") else []


def _line(raw: bytes, host_ns: int) -> LogLine:
    return LogLine(text=raw.rstrip(b"\r").decode("utf-8", errors="replace"), host_ns=host_ns)


def boot_once(
    config: BootConfig,
    on_line: Callable[[LogLine], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> Boot:
    """Boot once and return the Boot with every serial line, its outcome and QEMU's argv.

    ``on_line`` is called for each line as it arrives; ``on_start`` with QEMU's pid right after it
    started (for a HostLoadMeter). Outcomes: ok (the marker appeared and QEMU exited 0, or the marker
    appeared and ``stop_on_marker``/``end_regex`` stopped it), panic, timeout, qemu-error. Raises
    BootError if QEMU, the kernel or the initrd is missing and InputError for bad options; QEMU never
    outlives this call.
    """
    argv = build_command(config)
    _check_inputs(config)
    marker = re.compile(config.marker_regex)
    end = re.compile(config.end_regex) if config.end_regex else None
    panic = re.compile(config.panic_regex) if config.panic_regex else None
    lines: list[LogLine] = []
    stderr_tail = b""
    marker_seen = stopped_by_us = timed_out = end_seen = False
    end_seen_ns = 0
    panic_line: str | None = None
    host_start_ns = time.monotonic_ns()
    proc = start_child(argv, config.cpu_affinity, config.qemu_binary)
    assert proc.stdout is not None and proc.stderr is not None
    try:
        if on_start is not None:
            on_start(proc.pid)
        deadline_ns = host_start_ns + int(config.timeout_s * 1e9)
        splitter = LineSplitter(re.compile(config.prompt_regex.encode()) if config.prompt_regex else None)
        selector = selectors.DefaultSelector()
        selector.register(proc.stdout, selectors.EVENT_READ, "out")
        selector.register(proc.stderr, selectors.EVENT_READ, "err")
        open_streams = 2
        while open_streams and not stopped_by_us:
            wait_s = (deadline_ns - time.monotonic_ns()) / 1e9
            if wait_s <= 0:
                timed_out = True
                break
            for key, _ in selector.select(timeout=wait_s):
                data = os.read(key.fd, 65536)
                now_ns = time.monotonic_ns()
                if not data:
                    selector.unregister(key.fileobj)
                    open_streams -= 1
                    continue
                if key.data == "err":
                    stderr_tail = (stderr_tail + data)[-_STDERR_TAIL_BYTES:]
                    continue
                for line in splitter.feed(data, now_ns):
                    lines.append(line)
                    if on_line is not None:
                        on_line(line)
                    if panic_line is None and panic is not None and panic.search(line.text):
                        panic_line = line.text
                        deadline_ns = min(deadline_ns, now_ns + int(PANIC_GRACE_S * 1e9))
                    if not marker_seen and marker.search(line.text):
                        marker_seen = True
                        stopped_by_us = config.stop_on_marker or end_seen
                    if end is not None and end.search(line.text) and not end_seen:
                        end_seen, end_seen_ns = True, now_ns
                        if marker_seen:
                            stopped_by_us = True
                        else:
                            deadline_ns = min(deadline_ns, now_ns + int(END_GRACE_S * 1e9))
        selector.close()
        for line in splitter.flush(time.monotonic_ns()):
            lines.append(line)
            if on_line is not None:
                on_line(line)
        if stopped_by_us or timed_out:
            _kill(proc)
        returncode = proc.wait()
    finally:
        _kill(proc)
        proc.stdout.close()
        proc.stderr.close()
    host_end_ns = time.monotonic_ns()
    # An end line and then no marker within END_GRACE_S: a failed boot, not a timeout.
    no_marker_after_end = end_seen and not marker_seen and timed_out
    outcome, reason = _outcome(
        config,
        lines,
        (host_end_ns - end_seen_ns) / 1e9 if end_seen else 0.0,
        marker_seen,
        stopped_by_us or no_marker_after_end,
        timed_out and not no_marker_after_end,
        panic_line,
        returncode,
        stderr_tail,
    )
    return Boot(
        lines=tuple(lines),
        outcome=outcome,
        reason=reason,
        kernel=str(config.kernel),
        cmdline=kernel_cmdline(config.append),
        machine=f"qemu {config.accel} smp={config.smp} mem={config.mem_mb}M cpu={config.cpu or 'default'}",
        accel=config.accel,
        host_start_ns=host_start_ns,
        host_end_ns=host_end_ns,
        command=tuple(argv),
    )


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill QEMU's process group (if still there) and reap it; safe to call twice."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    while True:
        try:
            proc.wait()
            return
        except KeyboardInterrupt:  # a second Ctrl-C must not leave a zombie or a running QEMU
            continue


def _outcome(
    config: BootConfig,
    lines: list[LogLine],
    waited_after_end_s: float,
    marker_seen: bool,
    stopped_by_us: bool,
    timed_out: bool,
    panic_line: str | None,
    returncode: int,
    stderr_tail: bytes,
) -> tuple[Outcome, str]:
    last = _shorten(lines[-1].text) if lines else "(no output at all)"
    if panic_line is not None:
        return Outcome.PANIC, _shorten(panic_line)
    if timed_out:
        where = "after the marker" if marker_seen else "without the marker"
        return Outcome.TIMEOUT, f"killed after {config.timeout_s:g} s {where}; last line: {last}"
    if stopped_by_us:
        if marker_seen:
            return Outcome.OK, ""
        waited = f"{waited_after_end_s:.0f} s"
        return Outcome.QEMU_ERROR, f"end line seen and no marker {waited} later; last line: {last}"
    stderr = _shorten(stderr_tail.decode("utf-8", errors="replace").strip().replace("\n", " | "))
    if returncode < 0:
        return Outcome.QEMU_ERROR, f"QEMU was killed by signal {-returncode}; last line: {last}"
    if returncode != 0:
        return Outcome.QEMU_ERROR, f"QEMU exited with status {returncode}: {stderr or 'no stderr'}"
    if not marker_seen:
        return Outcome.QEMU_ERROR, f"the guest stopped before printing the marker; last line: {last}"
    return Outcome.OK, ""


def _shorten(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."

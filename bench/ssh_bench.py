"""A measured reboot over SSH against the bare reboot: what bootscope's watching costs.

The test image (with openssh-server, kexec-tools and the test key) is served once by
``bootscope image serve`` (QEMU under TCG). Bare: ``ssh HOST 'systemctl --no-block kexec'`` after
``kexec -l`` of the running kernel, then ``ssh HOST cat boot_id`` once a second until the boot id
changes: order -> SSH back, nothing else. Measured: ``bootscope run ssh://... --reboot kexec`` with the
serial console read, SSH probed every 0.3 s, the journal and systemd's accounting read after each
reboot: its ``reboot_downtime_s`` and the wall time per stored reboot (which adds the wait for systemd
to finish and the reading). Both alternate, ``--n`` of each. Writes the ``SSH target: measured reboot
against the bare reboot`` section of bench/RESULTS.md.

Usage: ``python -m bench.ssh_bench [--n 2]`` (needs root's image cache with the test image built).

``python -m bench.ssh_bench --from-db DB`` reads the kexec reboots already stored in DB instead (for
example by tests/lab/test_ssh_target.py) and sets each one's ``reboot_downtime_s`` against the
machine's own reboot-to-SSH time: host time from the order to the new kernel's banner on the console,
plus the new kernel's own journal time of ``Started ssh.service``. The difference is what detecting
SSH's return costs (probe pauses, connect and banner waits, the key exchange of the probe that
succeeds); the load the probes put on the booting guest is inside both numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.results import write_section
from bootscope.metrics import REBOOT_DOWNTIME_S

IMAGE = "bootscope-test"
KEY = Path.home() / ".cache" / "bootscope" / "test-ssh" / "id_ed25519"
NAME = "SSH target: measured reboot against the bare reboot"


def _ssh(port: int, known: Path, command: str, timeout_s: float = 60) -> subprocess.CompletedProcess[str]:
    argv = ["ssh", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
            "-o", f"UserKnownHostsFile={known}", "-o", "IdentitiesOnly=yes", "-o", "ConnectTimeout=5",
            "-i", str(KEY), "-p", str(port), "root@127.0.0.1", command]  # fmt: skip
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, 255, "", "timeout")


def _wait_finished(port: int, known: Path) -> None:
    while _ssh(port, known, "systemctl is-system-running --wait", 600).stdout.strip() not in (
        "running",
        "degraded",
    ):
        time.sleep(1)


def _bare_reboot(port: int, known: Path) -> float:
    before = _ssh(port, known, "cat /proc/sys/kernel/random/boot_id").stdout.strip()
    loaded = _ssh(
        port,
        known,
        "kexec -l /boot/vmlinuz-$(uname -r) --initrd=/boot/initrd.img-$(uname -r) --reuse-cmdline",
    )
    assert loaded.returncode == 0, loaded.stderr
    ordered = _ssh(port, known, "systemctl --no-block kexec")
    assert ordered.returncode == 0, ordered.stderr
    ordered_at = time.monotonic()
    while True:
        now = _ssh(port, known, "cat /proc/sys/kernel/random/boot_id", 10)
        if now.returncode == 0 and now.stdout.strip() not in ("", before):
            back = time.monotonic()
            _wait_finished(port, known)  # the next reboot starts from a finished boot, as bootscope's does
            return back - ordered_at
        time.sleep(1)


def from_db(db: str) -> str:
    """Return the RESULTS section for the kexec reboots stored in ``db`` (see the module's docstring)."""
    from bootscope.lab.workloads.ssh_collect import split_console
    from bootscope.lab.workloads.ssh_reboot import console_marks
    from bootscope.store import Store

    rows = []
    with Store.open(db) as store:
        for experiment in store.list_experiments():
            for boot in store.boots(experiment.experiment.id):
                lines = store.boot_log(experiment.experiment.id, boot.index)
                marks = console_marks(split_console(lines))
                started = [line.text for line in lines if "Started ssh.service" in line.text]
                downtime = boot.metrics.get(REBOOT_DOWNTIME_S)
                if boot.outcome != "ok" or not started or marks.banner_ns is None or downtime is None:
                    continue
                assert boot.host_start_ns is not None
                ssh_s = float(started[0][1 : started[0].index("]")])
                to_banner_s = (marks.banner_ns - boot.host_start_ns) / 1e9
                rows.append((boot.variant, downtime, to_banner_s, ssh_s, downtime - to_banner_s - ssh_s))
    table = "\n".join(
        f"| {v} | {d:.1f} | {b:.1f} | {s_:.1f} | {b + s_:.1f} | {o:+.1f} |" for v, d, b, s_, o in rows
    )
    overhead = statistics.median(row[4] for row in rows) if rows else float("nan")
    return f"""## {NAME}

`python -m bench.ssh_bench --from-db DB` on the kexec reboots that `tests/lab/test_ssh_target.py`
stored (the test image served by `bootscope image serve`, QEMU TCG, 1 vCPU, 1 GiB, on the 2-core
development host while the rest of the suite ran). Bare reboot = the machine's own time from the
order to SSH listening again: host time from the order to the new kernel's banner on the console,
plus the new kernel's journal time of `Started ssh.service`. Measured = `reboot_downtime_s`.

| variant | `reboot_downtime_s` (s) | order -> banner (s) | banner -> sshd (s) | bare (s) | overhead (s) |
| --- | --- | --- | --- | --- | --- |
{table}

Median overhead of measuring: {overhead:+.1f} s per reboot (probe pauses of 0.3 s, a probe's connect
and banner wait of up to 15 s while the guest's network is not up, and the key exchange of the probe
that succeeds, all under TCG). A measured reboot's whole slot also waits for systemd
to finish and reads the journal and accounting (one more ssh command).
"""


def main(argv: list[str] | None = None) -> None:
    """Run the comparison and write its section."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=2)
    parser.add_argument("--from-db", default=None)
    args = parser.parse_args(argv)
    if args.from_db:
        section = from_db(args.from_db)
        write_section(NAME, section)
        print(section)
        return
    with tempfile.TemporaryDirectory() as tmp_text:
        tmp = Path(tmp_text)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        sock, known = tmp / "console.sock", tmp / "known_hosts"
        serve = subprocess.Popen(
            [sys.executable, "-m", "bootscope", "image", "serve", IMAGE, "--ssh-port", str(port),
             "--console-socket", str(sock), "--known-hosts", str(known)],
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            assert serve.stdout is not None and "QEMU pid" in serve.stdout.readline()
            _wait_finished(port, known)
            bare: list[float] = []
            downtime: list[float] = []
            wall: list[float] = []
            for round_ in range(args.n):
                bare.append(_bare_reboot(port, known))
                db = tmp / f"run{round_}.db"
                started = time.monotonic()
                done = subprocess.run(
                    [sys.executable, "-m", "bootscope", "run", f"ssh://root@127.0.0.1:{port}", "--identity",
                     str(KEY), "--known-hosts", str(known), "--console", f"socat -u UNIX-CONNECT:{sock} -",
                     "-n", "1", "--seed", "1", "--timeout", "600", "--format", "json", "--db", str(db)],
                    capture_output=True, text=True, check=False,
                )  # fmt: skip
                wall.append(time.monotonic() - started)
                assert done.returncode == 0, done.stderr[-2000:]
                metrics = json.loads(done.stdout)["variants"][0]["metrics"]
                downtime.append(metrics[REBOOT_DOWNTIME_S]["median"])
                print(
                    f"round {round_}: bare {bare[-1]:.1f} s, measured {downtime[-1]:.1f} s,"
                    f" wall {wall[-1]:.1f} s"
                )
        finally:
            serve.send_signal(signal.SIGTERM)
            serve.wait(60)
    median = statistics.median

    def row(what: str, values: list[float]) -> str:
        return f"| {what} | {median(values):.1f} | {', '.join(f'{v:.1f}' for v in values)} |"

    section = f"""## {NAME}

`python -m bench.ssh_bench --n {args.n}`: the test image served by `bootscope image serve` (QEMU TCG, 1 vCPU,
1 GiB) on the 2-core development host (load average {os.getloadavg()[0]:.1f} when it ended);
{args.n} bare kexec reboots and {args.n} measured ones (`bootscope run ssh://... --reboot kexec -n 1
--console ...`), alternating.

| what | median (s) | each (s) |
| --- | --- | --- |
{row("bare reboot: order -> SSH back (probe once a second)", bare)}
{row("measured `reboot_downtime_s` (probe every 0.3 s, console read)", downtime)}
{row("measured: wall time of the whole `bootscope run -n 1`", wall)}

Overhead of measuring on the downtime: {median(downtime) - median(bare):+.1f} s (median against median). The
wall time also holds bootscope's start, the checks before the first reboot, the wait for systemd to
finish and the reading of the journal and accounting after it.
"""
    write_section(NAME, section)
    print(section)


if __name__ == "__main__":
    main()

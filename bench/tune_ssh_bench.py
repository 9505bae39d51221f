"""Benchmark of `bootscope tune ssh://...` on a real machine (issue 29): the test image served by
`bootscope image serve` (a Debian system with sshd and kexec-tools under QEMU), reached over SSH
with the test key. The baseline adds ``bootscope.delay_s=N`` to the machine's own command line (it
makes ``bootscope-delay.service`` sleep N s before multi-user.target); the knob asked for removes it,
so the saving it must show in ``systemd_userspace_s`` is about N s, read from each new boot's
journal. Every boot is a kexec reboot of the running kernel with its whole command line.

Run: nice -n 10 .venv/bin/python -m bench.tune_ssh_bench [--image bootscope-test] [-n 4]
[--delay 5] [--budget 17] (about 10 minutes under TCG: 9 kexec reboots).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME = "tune over SSH: a served machine's planted unit taken off its command line"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_ssh(port: int, key: Path, known_hosts: Path, limit_s: float) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        done = subprocess.run(
            ["ssh", "-p", str(port), "-i", str(key), "-o", f"UserKnownHostsFile={known_hosts}",
             "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", "root@127.0.0.1", "true"],
            capture_output=True, check=False,
        )  # fmt: skip
        if done.returncode == 0:
            return
        time.sleep(2)
    sys.exit(f"the served machine did not answer SSH within {limit_s:g} s")


def main() -> None:
    """Serve the image, tune it over SSH through the CLI, print and record the verdicts."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--image", default="bootscope-test")
    parser.add_argument("-n", type=int, default=4)
    parser.add_argument("--delay", type=int, default=5, help="seconds bootscope-delay.service sleeps")
    parser.add_argument("--budget", type=int, default=17)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from bench.results import tune_rows, write_section
    from tests.ssh_keys import ssh_test_key

    where = Path(tempfile.mkdtemp(prefix="tune-ssh-bench-"))
    port, key, known_hosts = _free_port(), ssh_test_key(), where / "known_hosts"
    bootscope = str(ROOT / ".venv/bin/bootscope")
    served = subprocess.Popen(
        [bootscope, "image", "serve", args.image, "--ssh-port", str(port), "--known-hosts", str(known_hosts)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    try:
        assert served.stdout is not None
        first = served.stdout.readline()
        if "QEMU pid" not in first:
            sys.exit(f"image serve failed: {first} {served.stderr.read() if served.stderr else ''}")
        _wait_ssh(port, key, known_hosts, 600)
        command = [
            bootscope, "tune", f"ssh://root@127.0.0.1:{port}", "--identity", str(key),
            "--known-hosts", str(known_hosts), "--append", f"bootscope.delay_s={args.delay}",
            "--try=-bootscope.delay_s", "--only", "bootscope", "--metric", "systemd_userspace_s",
            "-n", str(args.n), "--budget", str(args.budget), "--seed", "5",
            "--db", str(where / "tune.db"), "--format", "json",
        ]  # fmt: skip
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        wall_s = time.perf_counter() - started
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(served.pid, signal.SIGTERM)
        served.wait(timeout=120)
    if done.returncode != 0:
        sys.exit(f"tune failed ({done.returncode}): {done.stderr.strip()[-600:]}")
    found = json.loads(done.stdout)
    rows = tune_rows(found)
    shown = ["bootscope", "tune", "ssh://root@127.0.0.1:PORT", *command[3:-4]]
    section = "\n".join(
        [
            f"## {NAME}",
            "",
            f"`{' '.join(shown)}` ({time.strftime('%Y-%m-%d')}, this 2-core host, the image served under"
            f" plain TCG; {wall_s:.0f} s wall, {found['boots_spent']} kexec reboots). Baseline:"
            f" `{found['baseline']['append']}`, median `systemd_userspace_s`"
            f" {found['baseline']['median']:.2f} s.",
            "",
            "| knob | risk | decision | saving (s) [95% interval] | boots a side | why |",
            "|---|---|---|---|---|---|",
            *rows,
            "",
            f"Recommended: `{(found.get('recommended') or {}).get('append', '(none)')}`.",
            "",
        ]
    )
    print(section)
    if not args.no_record:
        write_section(NAME, section)


if __name__ == "__main__":
    main()

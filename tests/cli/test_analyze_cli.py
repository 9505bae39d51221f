"""`bootscope analyze` end to end, as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def _run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bootscope", "analyze", *args],
        capture_output=True,
        text=True,
        input=None if stdin is None else stdin.decode(),
        timeout=120,
    )


def test_json_document_shape(data_dir: Path) -> None:
    done = _run(str(data_dir / "multiboot-6.1-cloud-smp2-then-smp1.log"), "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["input"]["boots_found"] == 2 and doc["input"]["format"] == "dmesg"
    assert doc["input"]["undecodable_bytes"] == 0
    assert len(doc["boots"]) == 2
    boot = doc["boots"][1]
    assert set(boot["identity"]) == {"release", "cmdline", "cpus", "arch", "memory_kb"}
    assert {"kernel_init_s", "userspace_s"} <= set(boot["metrics"])
    assert boot["metrics"]["kexec_downtime_s"] is None
    assert set(boot["phases"][0]) >= {"name", "start_s", "end_s", "duration_s", "share"}
    assert set(boot["gaps"][0]) == {"start_s", "duration_s", "before", "after"}
    assert {"count", "total_s", "failed", "unfinished", "top"} <= set(boot["initcalls"])
    assert {"cpus", "serial_s", "parallel_estimate_s"} <= set(boot["cpu_bringup"])


def test_boot_option_selects_one(data_dir: Path) -> None:
    done = _run(str(data_dir / "multiboot-6.1-cloud-smp2-then-smp1.log"), "--json", "--boot", "1")
    doc = json.loads(done.stdout)
    assert len(doc["boots"]) == 1 and doc["boots"][0]["identity"]["cpus"] == 2
    bad = _run(str(data_dir / "multiboot-6.1-cloud-smp2-then-smp1.log"), "--boot", "3")
    assert bad.returncode == 2 and "holds 2 boot(s)" in bad.stderr


def test_terminal_view(data_dir: Path) -> None:
    done = _run(str(data_dir / "debian-6.1-cloud-initcall-smp4.log"), "--top", "3")
    assert done.returncode == 0, done.stderr
    assert "Biggest: initcall crypto_algapi_init" in done.stdout
    assert "kernel_init_s" in done.stdout and "guest printk time" in done.stdout
    assert "backwards" in done.stderr


def test_stdin_and_gzip(data_dir: Path, tmp_path: Path) -> None:
    import gzip

    raw = (data_dir / "debian-6.1-cloud-smp2.log").read_bytes()
    packed = tmp_path / "log.gz"
    packed.write_bytes(gzip.compress(raw))
    from_stdin = json.loads(_run("-", "--json", stdin=raw).stdout)
    from_gz = json.loads(_run(str(packed), "--json").stdout)
    assert from_stdin["boots"] == from_gz["boots"]


def test_errors_have_exit_codes(tmp_path: Path) -> None:
    untimed = tmp_path / "untimed.log"
    untimed.write_text("just\nwords\n")
    done = _run(str(untimed))
    assert done.returncode == 5 and "cannot be timed" in done.stderr and "Traceback" not in done.stderr
    missing = _run(str(tmp_path / "nope.log"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
    directory = _run(str(tmp_path))
    assert directory.returncode == 2 and "directory" in directory.stderr
    binary = tmp_path / "binary.log"
    binary.write_bytes(bytes(range(256)) * 100)
    done = _run(str(binary))
    assert done.returncode == 5 and "Traceback" not in done.stderr

"""`bootscope analyze` end to end, as a user runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _run(
    *args: str, stdin: bytes | None = None, columns: int | None = None
) -> subprocess.CompletedProcess[str]:
    env = None if columns is None else {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run(
        [sys.executable, "-m", "bootscope", "analyze", *args],
        capture_output=True,
        text=True,
        input=None if stdin is None else stdin.decode(),
        timeout=120,
        env=env,
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
    done = _run(str(data_dir / "debian-6.1-cloud-initcall-smp4.log"), "--top", "3", "--verbose")
    assert done.returncode == 0, done.stderr
    # gaps are named by the line that opened them (as in diff, plot and the HTML page)
    assert "Biggest: after calling  crypto_algapi_init+0x0/0x7e @ 1 0.522 s" in done.stdout
    assert "kernel_init_s" in done.stdout and "guest printk time" in done.stdout
    assert "backwards" in done.stderr


def test_glance_fits_80_columns(data_dir: Path) -> None:
    for name in ("debian-6.1-cloud-initcall-smp4.log", "seed-002-cpu-up-haswell.log"):
        done = _run(str(data_dir / name), columns=80)
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert max(len(line) for line in lines) <= 80, name
    smp4 = _run(str(data_dir / "debian-6.1-cloud-initcall-smp4.log"), "--top", "5", columns=80).stdout
    # the summary line comes first, before any table, with the phases the log times
    first = " ".join(line.strip() for line in smp4.splitlines()[1:4])
    assert first.startswith("kernel 4.097 s to Run /init (setup 0.203, mm_init 0.733,")
    assert "userspace 0.093 s to the marker (at 4.190 s)" in first
    assert "guest printk time" not in smp4 and "not in this log │" not in smp4
    assert "metrics not in this log: host_wall_s, host_kernel_start_s," in smp4
    # one row per gap (no wrapped "previous:" lines), the gap after Run /init labelled userspace
    gap_rows = [line for line in smp4.splitlines() if line.startswith("│ 4.097 │ 0.160 │")]
    assert len(gap_rows) == 1 and "userspace" in gap_rows[0] and "previous" not in smp4


def test_cpus_without_per_cpu_times_are_one_line(data_dir: Path) -> None:
    done = _run(str(data_dir / "seed-002-cpu-up-haswell.log"), columns=80)
    assert "28 CPUs brought up; per-CPU times not in this log" in done.stdout
    assert "not in this log: kernel, cmdline, cpus, arch, memory" in done.stdout
    assert "phases: none timed" in done.stdout
    verbose = _run(str(data_dir / "seed-002-cpu-up-haswell.log"), "--verbose", columns=80)
    assert "phases (cycles)" in verbose.stdout and "not in this log" in verbose.stdout


def test_format_is_the_output_format(data_dir: Path) -> None:
    log = str(data_dir / "debian-6.1-cloud-smp2.log")
    as_json = _run(log, "--format", "json", "--input-format", "dmesg")
    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout)["input"]["format"] == "dmesg"
    assert json.loads(_run(log, "--json").stdout) == json.loads(as_json.stdout)  # the hidden alias
    table = _run(log, "--format", "table")
    assert table.returncode == 0 and table.stdout.startswith("─")
    old = _run(log, "--format", "dmesg")  # the old spelling: deprecated, still working
    assert old.returncode == 0 and "Run /init" in old.stdout
    assert "--format dmesg names the log format: use --input-format dmesg" in old.stderr
    bad = _run(log, "--format", "yaml")
    assert bad.returncode == 2 and "--input-format" in bad.stderr
    clash = _run(log, "--format", "kmsg", "--input-format", "dmesg")
    assert clash.returncode == 2 and "disagree" in clash.stderr


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
    # refused from its first bytes as not a text log (issue 26), no longer scanned and called untimed
    assert done.returncode == 2 and "looks binary" in done.stderr and "Traceback" not in done.stderr


def test_a_small_log_is_analysed_without_numpy_or_rich(data_dir: Path, tmp_path: Path) -> None:
    # Start-up is most of a small log's wall time (bench/RESULTS.md): the line path and the plain-text
    # glance view must not pull numpy (about 50 ms) or rich back in. A big log still takes numpy.
    probe = (
        "import sys\nfrom bootscope.cli import main\nsys.argv = ['bootscope', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('loaded:', sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'rich'}))\n"
    )
    small = str(data_dir / "debian-6.1-cloud-smp2.log")
    big = tmp_path / "big.log"
    big.write_text((data_dir / "debian-6.1-cloud-initcall-smp4.log").read_text() * 3)
    for args, loaded in (
        (["analyze", small], "[]"),
        (["analyze", "--json", small], "[]"),
        (["analyze", "--json", str(big)], "['numpy']"),
        (["analyze", "--verbose", small], "['rich']"),
    ):
        done = subprocess.run(
            [sys.executable, "-c", probe, *args], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[-1] == f"loaded: {loaded}", args
        assert "Run /init" in done.stdout or "kernel_init_s" in done.stdout

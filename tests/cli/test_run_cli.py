"""`bootscope run`, `runs` and `export` end to end: real boots of a Debian cloud kernel, Ctrl-C and a
killed process mid-run, resume, and one-line errors for bad input."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from cli_here import run_in_process
from kernel_pin import PINNED_PACKAGE

from bootscope.lab.plans.schedule import build_schedule
from bootscope.store import BootRecord, Store, VariantRecord

WAIT_LIMIT_S = 400.0


def _bootscope(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bootscope", *args], capture_output=True, text=True, timeout=900, cwd=cwd
    )


def _the_only_boot(db: Path) -> tuple[BootRecord, list[str], VariantRecord]:
    """The single stored boot of experiment 1: its record, its console lines and its variant."""
    with Store.open(db) as store:
        (boot,) = store.boots(1)
        texts = [line.text for line in store.boot_log(1, 1)]
        (variant,) = store.experiment(1).variants
    return boot, texts, variant


def _in_process(argv: list[str]) -> int:
    """Run the CLI in this process (the error paths need no boot); return its exit code."""
    return run_in_process(*argv)


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "bootscope", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _stored(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with Store.open(db) as store:
            return sum(len(store.boots(e.experiment.id)) for e in store.list_experiments())
    except Exception:  # the schema may be half-created at the very start
        return 0


def _wait_for_boots(db: Path, count: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + WAIT_LIMIT_S
    while _stored(db) < count:
        if proc.poll() is not None:
            raise AssertionError(
                f"bootscope ended early ({proc.returncode}): {proc.stderr.read() if proc.stderr else ''}"
            )
        if time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"no {count} boots stored within {WAIT_LIMIT_S} s")
        time.sleep(0.2)


def _qemu_with(tag: str) -> list[int]:
    """PIDs of live processes whose command line carries ``tag`` (our test's QEMUs only)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if tag.encode() in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _guest_times(lines: list[str]) -> tuple[float, float]:
    """The guest's own numbers, read straight from its stored console log: Run /init's printk time and
    the marker's uptime."""
    init = next(
        re.search(r"\[\s*(\d+\.\d+)\] Run /init as init process", t) for t in lines if "Run /init" in t
    )
    up = next(re.search(r"BOOTSCOPE-MARKER.* uptime=(\d+\.\d+)", t) for t in lines if "BOOTSCOPE-MARKER" in t)
    assert init is not None and up is not None
    return float(init.group(1)), float(up.group(1))


@pytest.mark.boot
def test_run_two_variants_stores_the_guests_own_times(cloud_kernel: Path, tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    result = _bootscope(
        "run", str(cloud_kernel), "-n", "2", "--warmup", "1", "--seed", "17", "--accel", "tcg", "-j", "2",
        "--variant", "a:", "--variant", "b:mem=384,append=bootscope_test=b", "--db", str(db),
        "--meta", "revision=3f2a91c", "--meta", "board=qemu-q35",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    words = " ".join(result.stdout.split())  # plain lines wrap at 80 columns, at spaces only
    assert "accelerator: tcg" in words and f"experiment 1 in {db}" in words
    # Two variants with two ok boots each: the run ends with the comparison of b against a.
    assert "kernel_init_s (s)" in result.stdout and "userspace_s (s)" in result.stdout
    assert result.stdout.count("against a (2)") == 2 and result.stdout.count("\n b (2) ") == 2, result.stdout
    # b boots with less memory: every comparison says the sides are not alike, naming both values.
    assert words.count("NOT LIKE FOR LIKE: the sides differ in memory") == 2, result.stdout

    exported = _bootscope("export", "latest", "--format", "json", "--db", str(db))
    document = json.loads(exported.stdout)
    experiment = document["experiment"]
    assert experiment["seed"] == 17 and experiment["accel"] == "tcg" and experiment["status"] == "complete"
    assert experiment["host"]["cores"] >= 1 and "QEMU" in experiment["host"]["qemu_version"]
    boots = document["boots"]
    # Stored in the interleaved, seeded order: warm-up round first, then every variant once per round.
    order = build_schedule(["a", "b"], samples=2, warmup=1, seed=17)
    assert [(b["index"], b["variant"], b["warmup"]) for b in boots] == [
        (s.index, s.variant, s.warmup) for s in order
    ]
    for boot in boots:
        assert boot["outcome"] == "ok", boot["reason"]
        texts = [text for _ns, text in boot["log"]]
        init_s, uptime_s = _guest_times(texts)
        assert boot["metrics"]["kernel_init_s"] == init_s
        assert boot["metrics"]["userspace_s"] == uptime_s
        # The marker's host arrival minus QEMU's start, from the stored per-line host stamps.
        marker_ns = next(ns for ns, text in boot["log"] if "BOOTSCOPE-MARKER" in text)
        assert boot["metrics"]["host_wall_s"] == pytest.approx((marker_ns - boot["host_start_ns"]) / 1e9)
        # Firmware and decompression come first, so the host waited longer than the guest counted, unless
        # the guest's clock ran fast: on a loaded host the vCPU can be descheduled while the kernel
        # calibrates its TSC against the PIT (one CI run: "PIT calibration deviates from HPET: 882273
        # 2596197", 882 MHz used, the clock 2.9 times fast until the clocksource watchdog marked the
        # TSC unstable; uptime 6.21 s after 5.54 s of host time).
        if not any("Marking TSC unstable" in text for text in texts):
            assert boot["metrics"]["host_wall_s"] > uptime_s
        command = boot["command"]
        assert command[command.index("-m") + 1] == ("384" if boot["variant"] == "b" else "512")
        assert ("bootscope_test=b" in " ".join(boot["command"])) == (boot["variant"] == "b")

    with Store.open(db) as store:
        samples = store.samples(1, "kernel_init_s")
        assert samples == {
            name: [b["metrics"]["kernel_init_s"] for b in boots if b["variant"] == name and not b["warmup"]]
            for name in ("a", "b")
        }
        # `bootscope analyze --run` reads the same stored log; check it through the store API here.
        assert [line.text for line in store.boot_log(1, 3)] == [text for _ns, text in boots[2]["log"]]

    rows = list(
        csv.DictReader(io.StringIO(_bootscope("export", "1", "--format", "csv", "--db", str(db)).stdout))
    )
    assert [float(r["userspace_s"]) for r in rows] == [b["metrics"]["userspace_s"] for b in boots]
    listing = _bootscope("runs", "--db", str(db), "--format", "json")
    assert json.loads(listing.stdout)[0]["ok"] == 6

    # The run's labels: its point in the watched series of each variant (one fingerprint each).
    with Store.open(db) as store:
        assert store.experiment(1).meta == {"revision": "3f2a91c", "board": "qemu-q35"}
    watched = json.loads(_bootscope("watch", "--run", "latest", "--db", str(db), "--format", "json").stdout)
    series = watched["series"]
    assert len(series) == 2 * 4  # two variants x kernel_init_s, userspace_s, host_wall_s, host_kernel_start_s
    assert all(s["points"] == 1 and not s["enough_history"] for s in series)
    assert watched["opened"] == [] and watched["alerts"] == []


@pytest.mark.boot
def test_until_precise_stops_early_and_stored_boots_analyze(cloud_kernel: Path, tmp_path: Path) -> None:
    db = tmp_path / "until.db"
    result = _bootscope(
        "run", str(cloud_kernel), "-n", "5", "--max-n", "8", "--warmup", "0", "--until", "precise",
        "--precision", "50%", "--accel", "tcg", "--db", str(db), "--format", "json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["until_satisfied"] is True and summary["stopped_early"] is True
    # One variant: the median's 95 % interval needs six boots (five give 1 - 2/32 < 95 %); the boot
    # times vary by a few percent, far inside 50 %, so the sixth boot ends the run.
    assert summary["boots_run"] == 6 and summary["variants"][0]["ok"] == 6
    with Store.open(db) as store:
        boot = store.boots(1)[2]
    # A stored boot analysed later gets the host-side metrics the run recorded.
    analysis = json.loads(
        _bootscope("analyze", "--run", "1", "--boot", "3", "--format", "json", "--db", str(db)).stdout
    )
    metrics = analysis["boots"][0]["metrics"]
    for name in ("kernel_init_s", "userspace_s", "host_wall_s", "host_kernel_start_s"):
        assert metrics[name] == pytest.approx(boot.metrics[name]), name
    assert 0 < metrics["host_kernel_start_s"] < metrics["host_wall_s"]


@pytest.mark.boot
def test_panicking_kernel_is_stored_as_panic(cloud_kernel: Path, tmp_path: Path) -> None:
    db = tmp_path / "panic.db"
    result = _bootscope(
        "run", str(cloud_kernel), "-n", "1", "--warmup", "0", "--accel", "tcg", "--append",
        "rdinit=/does-not-exist init=/does-not-exist", "--db", str(db), "--format", "json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["variants"][0]["failed"] == 1 and summary["variants"][0]["ok"] == 0
    with Store.open(db) as store:
        (boot,) = store.boots(1)
    assert boot.outcome == "panic" and "Kernel panic" in boot.reason


@pytest.mark.boot
def test_killed_and_interrupted_runs_keep_their_boots_and_resume(cloud_kernel: Path, tmp_path: Path) -> None:
    db = tmp_path / "resume.db"
    tag = f"bootscope_test={uuid.uuid4().hex}"
    base = ["--db", str(db)]
    proc = _start("run", str(cloud_kernel), "-n", "4", "--warmup", "0", "--seed", "5", "--accel", "tcg",
                  "--append", tag, *base)  # fmt: skip
    # 1. SIGKILL after the first boot is stored: the store stays readable, QEMU dies with us.
    _wait_for_boots(db, 1, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    time.sleep(0.5)
    assert _qemu_with(tag) == []
    with Store.open(db) as store:
        assert store.experiment(1).status == "running"  # nobody could mark it
        killed_boots = store.boots(1)
    assert len(killed_boots) >= 1 and all(b.outcome == "ok" for b in killed_boots)

    # 2. Resume, then Ctrl-C after the next boot is stored: interrupted, boots kept.
    proc = _start("run", "--resume", "1", *base)
    _wait_for_boots(db, len(killed_boots) + 1, proc)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert _qemu_with(tag) == []
    with Store.open(db) as store:
        assert store.experiment(1).status == "interrupted"
        interrupted_boots = store.boots(1)
    assert interrupted_boots[: len(killed_boots)] == killed_boots
    assert len(interrupted_boots) < 4

    # 3. Resume to the end: only the missing positions run, same seeded order, nothing twice.
    result = _bootscope("run", "--resume", "latest", *base)
    assert result.returncode == 0, result.stderr
    with Store.open(db) as store:
        assert store.experiment(1).status == "complete"
        final = store.boots(1)
    assert [b.index for b in final] == [1, 2, 3, 4]
    assert final[: len(interrupted_boots)] == interrupted_boots
    assert all(b.outcome == "ok" and b.metrics.get("kernel_init_s") for b in final)
    assert f"boots run now: {4 - len(interrupted_boots)}" in result.stdout


@pytest.mark.boot
def test_file_reaches_the_guest_and_the_stored_config(tmp_path: Path) -> None:
    token = uuid.uuid4().hex
    host = tmp_path / "x.conf"
    host.write_text(f"file-says {token}\n")
    db = tmp_path / "file.db"
    result = _bootscope(
        "run", f"debian:{PINNED_PACKAGE}", "-n", "1", "--warmup", "0", "--accel", "tcg",
        "--file", f"{host}:/etc/x", "--command", "cat /etc/x >/dev/kmsg", "--db", str(db), "--format", "json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    boot, texts, variant = _the_only_boot(db)
    assert boot.outcome == "ok", boot.reason
    # The guest's cat ran before the marker and printed the host file's bytes. It writes them to the
    # kernel's log, one record that the console prints whole: a line written to the console itself can
    # be cut by a kernel line printed meanwhile (seen once when another boot loaded the host).
    said = next(i for i, text in enumerate(texts) if text.endswith(f"file-says {token}"))
    assert said < next(i for i, text in enumerate(texts) if text.startswith("BOOTSCOPE-MARKER"))
    assert variant.config["files"] == [[str(host), "/etc/x"]]


def _virtio_modules(kernel: Path) -> list[Path]:
    """The Debian cloud kernel has virtio-blk as modules (CONFIG_VIRTIO_BLK=m): its .ko files, in load
    order, from the unpacked package next to the image; skip when they are not there."""
    found = sorted((kernel.parent.parent / "lib" / "modules").glob("*/kernel/drivers"))
    names = ["virtio/virtio_ring.ko", "virtio/virtio.ko", "virtio/virtio_pci_modern_dev.ko",
             "virtio/virtio_pci_legacy_dev.ko", "virtio/virtio_pci.ko", "block/virtio_blk.ko"]  # fmt: skip
    if not found or not all((found[-1] / name).is_file() for name in names):
        pytest.skip(f"no virtio modules next to {kernel}")
    return [found[-1] / name for name in names]


@pytest.mark.boot
@pytest.mark.skipif(shutil.which("mke2fs") is None, reason="mke2fs (e2fsprogs) not installed")
def test_disk_is_attached_and_never_modified(cloud_kernel: Path, tmp_path: Path) -> None:
    from bootscope.lab.qemu.initramfs import InitramfsSpec, build_initramfs

    # The kernel cannot mount a virtio root without modules, so the disk rides along with an initramfs
    # (passed as the user's own --initrd) that loads them, reads the disk and writes to it.
    token = uuid.uuid4().hex
    content = tmp_path / "content"
    content.mkdir()
    (content / "hello").write_text(f"{token}\n")
    image = tmp_path / "disk.img"
    subprocess.run(["mke2fs", "-q", "-F", "-t", "ext4", "-d", str(content), str(image), "8M"], check=True)
    before = hashlib.sha256(image.read_bytes()).hexdigest()
    modules = _virtio_modules(cloud_kernel)
    initrd = build_initramfs(
        InitramfsSpec(
            commands_before_marker=(
                *(f"insmod /modules/{module.name}" for module in modules),
                "mkdir -p /mnt",
                "for i in 1 2 3 4 5 6 7 8 9 10; do [ -b /dev/vda ] && break; sleep 0.2; done",
                "mount -t ext4 /dev/vda /mnt",
                "was=$(cat /mnt/hello); echo overwritten > /mnt/hello; sync",
                'echo "DISK-SAYS was=$was now=$(cat /mnt/hello)"',
            ),
            extra_files=tuple((module, f"/modules/{module.name}") for module in modules),
        ),
        cache_root=tmp_path / "initramfs",
    )
    db = tmp_path / "disk.db"
    result = _bootscope(
        "run", str(cloud_kernel), "-n", "1", "--warmup", "0", "--accel", "tcg", "--disk", str(image),
        "--initrd", str(initrd), "--marker", "^DISK-SAYS ", "--db", str(db), "--format", "json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    boot, texts, variant = _the_only_boot(db)
    assert boot.outcome == "ok", boot.reason
    assert f"DISK-SAYS was={token} now=overwritten" in texts
    assert boot.command[boot.command.index("-drive") + 1] == (
        f"file={image},if=virtio,format=raw,snapshot=on"
    )
    assert variant.config["disk"] == str(image)
    # snapshot=on: the guest's write went to a temporary overlay, not to the image.
    assert hashlib.sha256(image.read_bytes()).hexdigest() == before


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["run", "/no/such/bzImage", "-n", "1"], 3, "no such kernel"),
        (["run", "{data}/debian-6.1-cloud-smp2.log", "-n", "1"], 3, "not a kernel image"),
        (["run", "/no/such/bzImage", "--variant", "a:smp"], 2, "'smp' is not OPTION=VALUE"),
        (["run", "/no/such/bzImage", "--variant", "a:colour=blue"], 2, "unknown option 'colour'"),
        (["run", "/no/such/bzImage", "-n", "0"], 2, "at least 1"),
        (["run", "/no/such/bzImage", "--precision", "1%"], 2, "only with --until precise"),
        (["run", "/no/such/bzImage", "--until", "precise", "--precision", "abc"], 2, "give a percentage"),
        (["run", "/no/such/bzImage", "--until", "soon"], 2, "--until must be one of precise"),
        (["run", "/no/such/bzImage", "--file", "/no/such/file:/etc/x"], 2, "no such host file"),
        (["run", "/no/such/bzImage", "--file", "{data}/README.md:etc/x"], 2, "must be absolute"),
        (["run", "/no/such/bzImage", "--disk", "/no/such/disk.img"], 2, "no such disk image"),
        (["run", "/no/such/bzImage", "--disk", "{data}/README.md"], 2, "needs --marker REGEX"),
        (
            ["run", "/no/such/bzImage", "--disk", "{data}/README.md", "--marker", "x", "--command", "true"],
            2,
            "which a disk without an initrd does not use",
        ),
        (["run", "--resume", "9"], 2, "no experiment 9"),  # a run that is not there: bad input
        (["export", "latest", "--format", "xml"], 2, "json, csv or kcidb"),
        (["run", "/no/such/bzImage", "--format", "yaml"], 2, "choose table or json"),
        (["run", "/no/such/bzImage", "--retries", "-1"], 2, "--retries cannot be negative"),
        (["tune"], 2, "give a KERNEL (path or debian:cloud) or --image NAME to tune, or --resume ID"),
        (["tune", "/no/such/bzImage", "--resume", "latest"], 2, "--resume takes no KERNEL"),
        (["tune", "--resume", "latest"], 2, "--resume latest: this store holds no tune"),
        (["tune", "/no/such/bzImage", "--try", "two words"], 2, "give one command-line word"),
        (["tune", "/no/such/bzImage", "--reboot", "cold"], 2, "a domain (libvirt:) or a machine (ssh"),
        (["tune", "ssh://root@example.invalid", "--reboot", "cold"], 2, "tuned by kexec reboots"),
        (["tune", "labgrid:/no/such.yaml", "--reboot", "warm"], 2, "a warm reboot keeps the boot loader's"),
        (["tune", "--resume", "latest", "--reboot", "cold"], 2, "--resume takes no KERNEL"),
        (["kexec", "/no/such/bzImage", "--mem", "lots"], 2, "--mem takes MiB"),
        (["kexec", "/no/such/bzImage", "--mem", "32"], 2, "at least 64 MiB"),
        (["kexec", "/no/such/bzImage", "--mem", "2048", "--mem-sweep", "1024,2048"], 2, "not both"),
        (["kexec", "/no/such/bzImage", "--mem-sweep", "1024,x"], 2, "--mem-sweep takes MiB"),
        (["kexec", "/no/such/bzImage", "--mem-sweep", "1024,2048", "--variant", "a:smp=2"], 2, "not both"),
    ],
)
def test_bad_input_is_one_line(
    args: list[str],
    code: int,
    message: str,
    tmp_path: Path,
    data_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [arg.replace("{data}", str(data_dir)) for arg in args]
    assert _in_process([*argv, "--db", str(tmp_path / "bad.db")]) == code
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bootscope: error:") and message in lines[0], lines


@pytest.mark.parametrize("db", ["{tmp}/missing-dir/x.db", "/proc/bootscope.db"])
def test_unwritable_database_is_one_line(db: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        _in_process(["run", "/no/such/bzImage", "-n", "1", "--db", db.replace("{tmp}", str(tmp_path))]) == 4
    )
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "bootscope: error:" in lines[0], lines

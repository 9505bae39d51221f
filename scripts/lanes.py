"""`make test`: the whole suite as three pytest runs, the first two at once, one per host core.

The suite's time is mostly real boots, and a TCG guest with one vCPU keeps one core busy while the
other waits. So the tests of the one built image (the machine it serves over SSH, its root under a
foreign kernel, its --icount A/B, whose guest time the host cannot reach since the disk is an NVDIMM)
run in their own lane beside every other test, and the tests marked ``alone`` (their boots measure
host time: plain TCG with two vCPUs, bootscope's idle-host wait, a load of their own, cyclictest) run
last, by themselves, once both lanes are done. The image lane also takes a few files that boot only
the cached kernel under --icount, so that the two lanes end together. Each real part is still started
once: the image lane holds the served machine, the other lane the Dask cluster, the database server
and the browser; kernels and the image come from one cache.

All three runs use one random order seed, printed first (again: BOOTSCOPE_TEST_SEED=N make test);
arguments after the script's name go to every run. Exit status: 0 when all three pass, else the
first failing run's pytest status (130 after Ctrl-C). Each run's temporary files are under one
folder, removed when everything passed and named on the last line otherwise.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

# The tests that boot the built image (tests/conftest.py's default_image): the machine it serves, its
# root under a foreign kernel, its --icount A/B experiment.
IMAGE_LANE = (
    "tests/lab/test_ssh_target.py",
    "tests/lab/test_foreign_kernel_boot.py",
    "tests/lab/test_image_boot.py",
    "tests/lab/test_labgrid_image.py",
    "tests/lab/test_labgrid_ssh.py",
)
# Files that boot only the cached kernel, under --icount, and use nothing started once per session:
# they run in the image lane so that both lanes end together. Measured in CI (2026-11-27, 1250 s):
# the rest lane took 1008 s and the image lane 785 s; these three took 104 s on an idle host. With
# serve and tune (CI of stop 38): rest 993 s, image 896 s, so tune's real boots (77 s) moved here too.
# Stop 40 (CI 1029 s): rest 798 s, image 841 s with the labgrid image boot (20 s) here and the U-Boot
# board's boots (12 s), which went back to the rest lane.
BESIDE_IMAGE = (
    "tests/usecases/test_history.py",
    "tests/usecases/test_bisect.py",
    "tests/cli/test_sweep_cli.py",
    "tests/cli/test_tune_cli.py",
    "tests/lab/test_labgrid_tune_cold.py",
    # stop 46: the libvirt kind's real daemon and domain (about 140 s; the daemon is this file's alone)
    "tests/lab/test_libvirt_domain.py",
)
SEED_ENV = "BOOTSCOPE_TEST_SEED"


@dataclass(frozen=True, slots=True)
class Lane:
    """One pytest run: its name and the arguments that choose its tests."""

    name: str
    selection: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Finished:
    """How one pytest run ended: its exit status and wall seconds."""

    name: str
    status: int
    wall_s: float


def lanes() -> tuple[Lane, Lane, Lane]:
    """The image lane, the rest (run at once), and the tests that need the host alone (run after):
    every test of the suite is in exactly one of them."""
    files = IMAGE_LANE + BESIDE_IMAGE
    ignored = tuple(f"--ignore={path}" for path in files)
    return (
        Lane("image", ("-m", "not alone", *files)),
        Lane("rest", ("-m", "not alone", *ignored)),
        Lane("alone", ("-m", "alone")),
    )


def pytest_argv(lane: Lane, seed: int, work: Path, extra: list[str]) -> list[str]:
    """The command line of one lane's pytest run."""
    return [
        sys.executable, "-m", "pytest", "-q", "-ra", "--durations=15",
        "-p", "randomly", f"--randomly-seed={seed}", f"--basetemp={work / lane.name}",
        *lane.selection, *extra,
    ]  # fmt: skip


def main(extra: list[str]) -> int:
    """Run the three lanes; return the exit status described above."""
    seed = int(os.environ.get(SEED_ENV) or random.randrange(1, 2**31))
    work = Path(tempfile.mkdtemp(prefix="bootscope-tests-"))
    image, rest, alone = lanes()
    print(
        f"test lanes: image ({' '.join(image.selection[2:])}) beside the rest, then the 'alone' tests;"
        f" random order seed {seed} (the same order again: {SEED_ENV}={seed} make test)",
        flush=True,
    )
    results: list[Finished] = []
    image_log = work / "image.log"
    started = time.monotonic()
    try:
        with image_log.open("w") as log:
            argv = pytest_argv(image, seed, work, extra)
            background = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
            ended: list[float] = []
            watcher = threading.Thread(target=_note_end, args=(background, ended), daemon=True)
            watcher.start()
            print(f"--- lane rest (the image lane writes to {image_log}, shown when it ends)", flush=True)
            results.append(_run(rest, seed, work, extra))
            print("--- waiting for the image lane", flush=True)
            status = background.wait()
            watcher.join()
            results.append(Finished(image.name, status, ended[0] - started))
        print("--- lane image", flush=True)
        sys.stdout.write(image_log.read_text(errors="replace"))
        print("--- lane alone (nothing else runs)", flush=True)
        results.append(_run(alone, seed, work, extra))
    except KeyboardInterrupt:
        print(f"\ninterrupted; temporary files kept in {work}", file=sys.stderr)
        return 130
    total_s = time.monotonic() - started
    for result in results:
        print(f"lane {result.name}: exit {result.status}, {result.wall_s:.0f} s")
    print(f"all lanes: {total_s:.0f} s; random order seed {seed}")
    failed = [result for result in results if result.status != 0]
    if failed:
        print(f"failed: lane {failed[0].name}; temporary files kept in {work}")
        return failed[0].status
    shutil.rmtree(work, ignore_errors=True)
    return 0


def _note_end(process: subprocess.Popen[bytes], ended: list[float]) -> None:
    """Wait for ``process`` and append the monotonic second it ended at to ``ended``."""
    process.wait()
    ended.append(time.monotonic())


def _run(lane: Lane, seed: int, work: Path, extra: list[str]) -> Finished:
    """Run one lane in the foreground, its output on ours."""
    started = time.monotonic()
    status = subprocess.run(pytest_argv(lane, seed, work, extra), check=False).returncode
    return Finished(lane.name, status, time.monotonic() - started)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

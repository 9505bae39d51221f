"""A board reached through a place on a real labgrid coordinator: a coordinator and an exporter run
on loopback (labgrid's own programs), the exporter publishes a resource group, a place matches it,
and the environment file's target reaches the place through a ``RemotePlace`` resource while its
board is labgrid's QEMU driver booting the pinned cloud kernel under -icount. Every claim about the
place is read back from the coordinator with ``labgrid-client``, not from bootscope: acquired by
this host and user while the run boots, free when it ends, free within seconds after bootscope is
killed with SIGKILL in the middle of a boot (the boots finished before stay stored), refused in one
line when someone else holds it or the coordinator is not there."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bootscope.lab.targets.labgrid.examples import INITRD_VARIABLE, KERNEL_VARIABLE
from bootscope.lab.targets.qemu import LocalQemu
from bootscope.store import Store

ROOT = Path(__file__).resolve().parents[2]
PLACE = "bootscope-board"
EXPORTER = "bootscope-exporter"
START_WAIT_S = 30.0


@dataclass(frozen=True)
class Lab:
    """A coordinator's address and an environment file whose target is its place."""

    address: str
    env: Path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _client(address: str, *args: str, user: str | None = None) -> subprocess.CompletedProcess[str]:
    environment = os.environ | ({"LG_USERNAME": user} if user else {})
    return subprocess.run(
        [sys.executable, "-m", "labgrid.remote.client", "-x", address, *args],
        capture_output=True, text=True, timeout=60, check=False, env=environment,
    )  # fmt: skip


def _holder(address: str) -> str:
    """Who holds the place, as the coordinator says (``None`` when free)."""
    shown = _client(address, "-p", PLACE, "show")
    assert shown.returncode == 0, shown.stderr
    line = next(line for line in shown.stdout.splitlines() if line.strip().startswith("acquired:"))
    return line.split(":", 1)[1].strip()


def _me() -> str:
    return f"{socket.gethostname()}/{os.environ.get('LG_USERNAME') or _user()}"


def _user() -> str:
    import getpass

    return getpass.getuser()


def _wait(predicate: object, timeout_s: float, what: str) -> float:
    """Poll ``predicate`` until true; return the seconds it took."""
    start = time.monotonic()
    while time.monotonic() - start < timeout_s:
        if predicate():  # type: ignore[operator]
            return time.monotonic() - start
        time.sleep(0.2)
    pytest.fail(f"{what}: not within {timeout_s} s")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, cloud_kernel: Path) -> Iterator[Lab]:
    root = tmp_path_factory.mktemp("labgrid-place")
    address = f"127.0.0.1:{_free_port()}"
    exported = root / "exporter.yaml"
    exported.write_text("board-net:\n  NetworkService:\n    address: 127.0.0.1\n    username: root\n")
    logs = (root / "coordinator.log").open("w"), (root / "exporter.log").open("w")
    coordinator = subprocess.Popen(
        [sys.executable, "-m", "labgrid.remote.coordinator", "-l", address],
        stdout=logs[0],
        stderr=logs[0],
        cwd=root,  # it keeps its places in its working directory
    )
    exporter = None
    try:
        _wait(lambda: _client(address, "places").returncode == 0, START_WAIT_S, "the coordinator")
        exporter = subprocess.Popen(
            [sys.executable, "-m", "labgrid.remote.exporter", "-c", address, "--name", EXPORTER,
             "--hostname", "127.0.0.1", str(exported)],
            stdout=logs[1], stderr=logs[1], cwd=root,
        )  # fmt: skip
        _wait(lambda: "board-net" in _client(address, "resources").stdout, START_WAIT_S, "the exporter")
        for args in (("create",), ("add-match", f"{EXPORTER}/board-net/*")):
            done = _client(address, "-p", PLACE, *args)
            assert done.returncode == 0, done.stderr
        example = (ROOT / "examples" / "labgrid-qemu.yaml").read_text()
        env = root / "lab.yaml"
        env.write_text(
            example.replace(
                "    drivers:\n",
                f"    resources:\n      RemotePlace:\n        name: {PLACE}\n    drivers:\n",
                1,
            )
            + f"options:\n  coordinator_address: {address}\n"
        )
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv(KERNEL_VARIABLE, str(cloud_kernel))
            patch.setenv(INITRD_VARIABLE, str(LocalQemu().build_initramfs((), ())))
            yield Lab(address, env)
    finally:
        for process in (exporter, coordinator):
            if process is not None:
                process.terminate()
                process.wait(timeout=30)
        for log in logs:
            log.close()


def _bootscope(*args: str, quiet: bool = False) -> subprocess.Popen[str]:
    # quiet: no pipes, which a board's QEMU would keep open after bootscope is killed
    to = subprocess.DEVNULL if quiet else subprocess.PIPE
    return subprocess.Popen([sys.executable, "-m", "bootscope", *args], stdout=to, stderr=to, text=True)


@pytest.mark.boot
def test_a_run_holds_the_place_while_it_boots_and_frees_it_after(lab: Lab, tmp_path: Path) -> None:
    db = tmp_path / "place.db"
    assert _holder(lab.address) == "None"
    run = _bootscope("run", f"labgrid:{lab.env}", "--reboot", "cold", "-n", "2", "--db", str(db),
                     "--format", "json")  # fmt: skip
    _wait(lambda: _holder(lab.address) == _me(), 60, "the place acquired by this host and user")
    _out, err = run.communicate(timeout=300)
    assert run.returncode == 0, err
    assert _holder(lab.address) == "None"
    with Store.open(db) as store:
        experiment = store.experiment(1)
        boots = store.boots(1)
    assert experiment.host["labgrid_places"] == f"{PLACE}@{lab.address}"
    assert [boot.outcome for boot in boots] == ["ok", "ok"]
    assert all(0 < (boot.metrics["poweron_to_kernel_s"] or 0) < 60 for boot in boots)


@pytest.mark.boot
def test_sigkill_in_the_middle_of_a_run_leaves_the_place_free_and_its_boots_stored(
    lab: Lab, tmp_path: Path
) -> None:
    db = tmp_path / "killed.db"
    run = _bootscope("run", f"labgrid:{lab.env}", "--reboot", "cold", "-n", "6", "--db", str(db), quiet=True)
    _wait(lambda: _stored_boots(db) >= 1, 240, "a first boot stored")
    _wait(lambda: bool(_children(run.pid)), 60, "the next boot's QEMU started")
    assert _holder(lab.address) == _me()
    board = _children(run.pid)
    os.kill(run.pid, signal.SIGKILL)
    run.wait(timeout=30)
    try:
        released_s = _wait(lambda: _holder(lab.address) == "None", 15, "the place released after SIGKILL")
    finally:
        for pid in board:  # labgrid's QEMU outlives a killed parent, as a real board stays powered
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    assert released_s < 15
    assert _stored_boots(db) >= 1


def test_a_place_held_by_someone_else_is_refused_in_one_line(lab: Lab, tmp_path: Path) -> None:
    taken = _client(lab.address, "-p", PLACE, "acquire", user="someone-else")
    assert taken.returncode == 0, taken.stderr
    try:
        run = _bootscope("run", f"labgrid:{lab.env}", "-n", "1", "--db", str(tmp_path / "x.db"))
        _out, err = run.communicate(timeout=120)
    finally:
        freed = _client(lab.address, "-p", PLACE, "release", user="someone-else")
    assert freed.returncode == 0, freed.stderr
    assert run.returncode == 3
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"cannot acquire place '{PLACE}' on {lab.address}" in lines[0], err
    assert "someone-else" in lines[0]
    assert not (tmp_path / "x.db").exists() or _stored_boots(tmp_path / "x.db") == 0


def test_no_coordinator_is_one_line(lab: Lab, tmp_path: Path) -> None:
    env = tmp_path / "lab.yaml"
    env.write_text(lab.env.read_text().replace(lab.address, f"127.0.0.1:{_free_port()}"))
    run = _bootscope("run", f"labgrid:{env}", "-n", "1", "--db", str(tmp_path / "x.db"))
    _out, err = run.communicate(timeout=120)
    lines = err.strip().splitlines()
    assert run.returncode == 3 and len(lines) == 1, err
    assert "Could not connect to coordinator" in lines[0]


def _stored_boots(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with Store.open(db) as store:
            return len(store.boots(1)) if store.list_experiments() else 0
    except Exception:  # the run may be creating the store right now
        return 0


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            continue
    return [child for child in found if "qemu" in _comm(child)]


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text()
    except OSError:
        return ""

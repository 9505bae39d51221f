"""A real Dask cluster for tests: a ``dask scheduler`` process and ``bootscope worker`` processes on
loopback, and fake targets for the workers (importable there: the workers get this directory on
their PYTHONPATH, and Dask pickles the factories by reference)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from distributed import LocalCluster

from bootscope.lab.qemu.process import BootConfig
from bootscope.lab.targets.fake import FakeTarget
from bootscope.lab.targets.qemu import LineCallback, StartCallback
from bootscope.lab.workloads.latency_place import DONE_MARKER
from bootscope.model import Boot, LogLine
from bootscope.parse.latency_transcript import section_line

HERE = Path(__file__).parent
REPO = HERE.parent
START_LIMIT_S = 180.0  # a loaded 2-core host takes tens of seconds to import distributed
_WORKER_LINE = re.compile(r"bootscope worker: worker (tcp://\S+):")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(HERE), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _wait(what: str, ready: object, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_LIMIT_S
    while not callable(ready) or not ready():
        if proc.poll() is not None:
            raise AssertionError(f"{what} ended ({proc.returncode}): {log.read_text(errors='replace')}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not ready in {START_LIMIT_S} s: {log.read_text(errors='replace')}")
        time.sleep(0.1)


@dataclass
class Cluster:
    """Processes started by a test, stopped (SIGKILL, by pid) when it ends."""

    root: Path
    port: int = 0
    host: str = "127.0.0.1"  # where the scheduler listens ("0.0.0.0" for workers in namespaces)
    scheduler: subprocess.Popen[bytes] | None = None
    workers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)  # address -> process
    address: str = ""

    def start_scheduler(self) -> str:
        """Start ``dask scheduler`` on 127.0.0.1 (the same port as before, if it ran before); return
        its ``tcp://`` address."""
        file = self.root / "scheduler.json"
        file.unlink(missing_ok=True)
        log = self.root / "scheduler.log"
        self.scheduler = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", self.host,
             "--port", str(self.port), "--scheduler-file", str(file), "--no-dashboard"],
            stdout=subprocess.DEVNULL, stderr=log.open("wb"), env=_env(),
        )  # fmt: skip
        _wait("dask scheduler", file.exists, self.scheduler, log)
        while not (text := file.read_text()) or not text.rstrip().endswith("}"):
            time.sleep(0.05)
        self.address = json.loads(text)["address"]
        self.port = int(self.address.rsplit(":", 1)[1])
        return self.address

    def start_worker(
        self,
        name: str,
        cores: str,
        slots: int = 1,
        namespace: Namespace | None = None,
        labels: tuple[str, ...] = (),
    ) -> str:
        """Start ``bootscope worker`` pinned to ``cores`` (in ``namespace``, reaching the scheduler at
        its side of the link) carrying ``labels`` (``KEY=VALUE``); return its Dask address once it
        joined."""
        log = self.root / f"{name}.log"
        scheduler = self.address.replace("tcp://", "dask://")
        prefix: list[str] = []
        if namespace is not None:
            prefix = ["ip", "netns", "exec", namespace.name]
            scheduler = f"dask://{namespace.host_address}:{self.port}"
        proc = subprocess.Popen(
            [*prefix, sys.executable, "-m", "bootscope", "worker", scheduler,
             "--slots", str(slots), "--cores", cores, "--name", name,
             *(word for label in labels for word in ("--label", label))],
            stdout=subprocess.DEVNULL, stderr=log.open("wb"), env=_env(),
        )  # fmt: skip
        found: list[str] = []

        def joined() -> bool:
            found[:] = _WORKER_LINE.findall(log.read_text(errors="replace"))
            return bool(found)

        _wait(f"worker {name}", joined, proc, log)
        self.workers[found[0]] = proc
        return found[0]

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        """SIGKILL one process we started and reap it."""
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)

    def stop(self) -> None:
        """SIGKILL every process this cluster started."""
        for proc in [*self.workers.values(), *([self.scheduler] if self.scheduler else [])]:
            self.kill(proc)


@contextlib.contextmanager
def local_boot_cluster() -> Iterator[str]:
    """A real local Dask cluster of two worker processes (nanny-restarted), one boot slot each;
    yields the scheduler's ``tcp://`` address."""
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, resources={"boot": 1}, dashboard_address=None
    ) as cluster:
        yield str(cluster.scheduler_address)


def slow_fake() -> FakeTarget:
    """A fake target whose boots take 0.3 s of real time, so that a test can act mid-run."""
    target = FakeTarget()
    target.before_boot = lambda _config: time.sleep(0.3)
    return target


def dying_fake(flag: str, victim_append: str) -> FakeTarget:
    """A fake target that kills its own process (the Dask worker) the first time it is asked to boot
    a config whose command line holds ``victim_append``, leaving ``flag`` behind so that the retry
    elsewhere boots normally."""
    target = FakeTarget()

    def before(config: BootConfig) -> None:
        time.sleep(0.2)
        if victim_append not in config.append:
            return
        try:  # O_EXCL: of two workers booting the victim at once, only one dies
            os.close(os.open(flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return
        os.kill(os.getpid(), signal.SIGKILL)

    target.before_boot = before
    return target


@dataclass
class Namespace:
    """A network namespace joined to this host by a veth pair: the host's side has ``host_address``,
    the namespace's side ``address`` (a /24 of their own). Needs root (ip netns); removed by ``remove``."""

    name: str
    host_address: str
    address: str
    host_link: str

    @classmethod
    def create(cls, number: int) -> Namespace:
        """Create namespace ``number`` (1-250) of this process, with its link up; raises on failure."""
        tag = f"bs{os.getpid() % 100000}n{number}"
        net = f"10.{200 + os.getpid() % 50}.{number}"
        made = cls(tag, f"{net}.1", f"{net}.2", f"{tag}h")
        steps = [
            ["ip", "netns", "add", tag],
            ["ip", "link", "add", made.host_link, "type", "veth", "peer", "name", f"{tag}g"],
            ["ip", "link", "set", f"{tag}g", "netns", tag],
            ["ip", "addr", "add", f"{made.host_address}/24", "dev", made.host_link],
            ["ip", "link", "set", made.host_link, "up"],
            ["ip", "netns", "exec", tag, "ip", "addr", "add", f"{made.address}/24", "dev", f"{tag}g"],
            ["ip", "netns", "exec", tag, "ip", "link", "set", f"{tag}g", "up"],
            ["ip", "netns", "exec", tag, "ip", "link", "set", "lo", "up"],
        ]
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True)
            if done.returncode:
                made.remove()
                raise AssertionError(
                    f"{' '.join(step)}: {done.stderr.strip()} (network namespaces need root)"
                )
        return made

    def remove(self) -> None:
        """Delete the namespace and the host's end of its link (which takes the other end along)."""
        subprocess.run(["ip", "link", "del", self.host_link], capture_output=True)
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True)


GUEST_CYCLICTEST = HERE / "data" / "latency" / "cyclictest-h200-q.txt"  # a real run, -h 200


@dataclass(slots=True)
class LatencyGuestFake(FakeTarget):
    """A fake target whose guests print a latency transcript: a real cyclictest run's output
    (``GUEST_CYCLICTEST``), with facts naming the guest's command line and the host cores its
    emulator was pinned to (``pinned=``), as a QEMU latency guest's console would."""

    def boot(self, config: BootConfig, on_line: LineCallback | None, on_start: StartCallback | None) -> Boot:
        """Return the synthetic boot with a latency transcript for its console."""
        boot = FakeTarget.boot(self, config, on_line, on_start)
        pinned = ",".join(str(core) for core in config.cpu_affinity or ())
        text = [
            section_line("facts"), "kernel_release=6.1.0-fake", f"cmdline={config.append}",
            f"pinned={pinned}",
            section_line("tool"), *GUEST_CYCLICTEST.read_text().splitlines(),
            section_line("exit"), "0", DONE_MARKER,
        ]  # fmt: skip
        return replace(boot, lines=tuple(LogLine(text=line) for line in text))


@contextlib.contextmanager
def namespaced_pair(root: Path) -> Iterator[tuple[Cluster, str, str]]:
    """A scheduler in this host's namespace and two workers (cores 0 and 1), each in a network
    namespace of its own; yields the cluster and the two workers' addresses (each its namespace's
    own, checked here), and stops and removes everything when the block ends."""
    cluster = Cluster(root, host="0.0.0.0")
    spaces: list[Namespace] = []
    try:
        spaces = [Namespace.create(1), Namespace.create(2)]
        cluster.start_scheduler()
        workers = [
            cluster.start_worker(f"w{k}", cores=str(k), namespace=space) for k, space in enumerate(spaces)
        ]
        assert [w.split("//")[1].split(":")[0] for w in workers] == [s.address for s in spaces]
        yield cluster, workers[0], workers[1]
    finally:
        cluster.stop()
        for space in spaces:
            space.remove()

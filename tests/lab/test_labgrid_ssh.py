"""A board reached over SSH (examples/labgrid-ssh-qemu.yaml): the test system image powered by
labgrid's QEMU driver with its SSH port forwarded, and labgrid's real SSHDriver ordering a warm and
a kexec reboot while the console is read from power-on. Checked on the stored consoles by this
test's own reader: the orders went over SSH (systemd's, not a console's bare ``reboot``), the warm
boot passed through the PC's firmware path and the kexec one did not, and the stored times are the
console's arrival times."""

from __future__ import annotations

import re
import socket
from pathlib import Path

import pytest

from bootscope.lab.targets.labgrid.examples import IMAGE_PATHS, IMAGE_VARIABLE
from bootscope.store import Store
from tests.cli_here import run_in_process
from tests.kernel_pin import TEST_IMAGE
from tests.ssh_keys import ssh_test_key

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "labgrid-ssh-qemu.yaml"
EXAMPLE_PORT = "10022"
_STAMP = re.compile(r"\[\s*(\d+\.\d+)\] ")
_LOGIN = re.compile(r"(?:\S|^\r?) login: ")
# printed by the kernel's real-mode setup, which a firmware boot runs and a kexec boot skips
_FIRMWARE_PATH = "Probing EDD"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _environment(into: Path) -> Path:
    """The example with a free port and the test image's key (the example uses the user's keys)."""
    text = EXAMPLE.read_text(encoding="utf-8")
    port = str(_free_port())
    uses = (f"port: {EXAMPLE_PORT}\n", f"hostfwd=tcp:127.0.0.1:{EXAMPLE_PORT}-:22")
    assert all(text.count(use) == 1 for use in uses) and "      SSHDriver: {}\n" in text
    for use in uses:
        text = text.replace(use, use.replace(EXAMPLE_PORT, port))
    text = text.replace("      SSHDriver: {}\n", f"      SSHDriver:\n        keyfile: {ssh_test_key()}\n")
    env = into / "ssh-board.yaml"
    env.write_text(text, encoding="utf-8")
    return env


@pytest.mark.boot
def test_warm_and_kexec_reboots_are_ordered_over_labgrids_ssh_driver(
    default_image: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(IMAGE_VARIABLE, TEST_IMAGE)
    for variable in IMAGE_PATHS:
        monkeypatch.delenv(variable, raising=False)
    db = tmp_path / "ssh.db"
    code = run_in_process(
        "run", f"labgrid:{_environment(tmp_path)}", "--reboot", "warm,kexec", "-n", "1", "--seed", "2",
        "--marker", "login: ", "--timeout", "300", "--db", str(db),
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    with Store.open(db) as store:
        boots = {boot.variant: boot for boot in store.boots(1)}
        logs = {name: store.boot_log(1, boot.index) for name, boot in boots.items()}
    assert sorted(boots) == ["kexec", "warm"]
    for way, boot in boots.items():
        assert boot.outcome == "ok", boot.reason
        order = boot.command[-1]
        assert f"systemctl --no-block {'kexec' if way == 'kexec' else 'reboot'}" in order  # SSH's order
        log = logs[way]
        banners = [i for i, line in enumerate(log) if "Linux version" in line.text]
        assert banners, "the new kernel's banner is on the console"
        new = log[banners[-1] :]
        login = next(line for line in new if _LOGIN.search(line.text))
        assert login.host_ns is not None and boot.host_start_ns is not None
        since_order_s = (login.host_ns - boot.host_start_ns) / 1e9
        assert boot.metrics["restart_to_marker_s"] == pytest.approx(since_order_s)
        run_init = next(line.text for line in new if "Run /init as init process" in line.text)
        stamp = _STAMP.search(run_init)
        assert stamp is not None and boot.metrics["kernel_init_s"] == pytest.approx(float(stamp[1]))
    assert any(_FIRMWARE_PATH in line.text for line in logs["warm"])
    assert not any(_FIRMWARE_PATH in line.text for line in logs["kexec"])
    assert "kexec -l" in " ".join(boots["kexec"].command)
    assert boots["kexec"].metrics["kexec_downtime_s"] is not None

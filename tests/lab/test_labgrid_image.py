"""The test system image booted from power-on through labgrid (examples/labgrid-image-qemu.yaml):
labgrid's QEMU driver powers a PC with the image's disk (snapshot=on), kernel and initramfs, and
the boot ends at the serial getty's login prompt. The stored numbers are read again from the stored
console by this test's own reader, and the image's disk is left as it was."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bootscope.lab.targets.labgrid.examples import IMAGE_PATHS, IMAGE_VARIABLE
from bootscope.store import Store
from tests.cli_here import run_in_process
from tests.kernel_pin import TEST_IMAGE

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "labgrid-image-qemu.yaml"
_STAMP = re.compile(r"^\[\s*(\d+\.\d+)\]")
# SeaBIOS leaves "Probing EDD ..." and escape codes on the line the kernel's banner starts on
_ANY_STAMP = re.compile(r"\[\s*\d+\.\d+\] ")
_LOGIN = re.compile(r"(?:\S|^\r?) login: ")


@pytest.mark.boot
def test_the_image_boots_from_power_on_to_its_login_prompt(
    default_image: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(IMAGE_VARIABLE, TEST_IMAGE)
    for variable in IMAGE_PATHS:
        monkeypatch.delenv(variable, raising=False)  # bootscope finds the image's files by its name
    disk = Path(default_image.disk)  # type: ignore[attr-defined]
    before = (disk.stat().st_mtime_ns, disk.stat().st_size)
    db = tmp_path / "image.db"
    code = run_in_process(
        "run", f"labgrid:{EXAMPLE}", "--reboot", "cold", "-n", "1", "--marker", "login: ",
        "--timeout", "300", "--db", str(db), "--format", "json",
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["variants"][0]["ok"] == 1
    with Store.open(db) as store:
        (boot,) = store.boots(1)
        log = store.boot_log(1, boot.index)
    first = next(line for line in log if _ANY_STAMP.search(line.text))
    assert first.host_ns is not None and boot.host_start_ns is not None
    assert boot.metrics["poweron_to_kernel_s"] == pytest.approx((first.host_ns - boot.host_start_ns) / 1e9)
    run_init = next(line.text for line in log if "Run /init as init process" in line.text)
    stamp = _STAMP.match(run_init)
    assert stamp is not None and boot.metrics["kernel_init_s"] == pytest.approx(float(stamp[1]))
    login = next(line for line in log if _LOGIN.search(line.text))
    assert login.host_ns is not None
    assert boot.metrics["host_wall_s"] == pytest.approx((login.host_ns - boot.host_start_ns) / 1e9)
    assert any("systemd[1]: Startup finished" in line.text for line in log)  # a whole system came up
    assert (disk.stat().st_mtime_ns, disk.stat().st_size) == before  # snapshot=on: nothing written

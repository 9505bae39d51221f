"""`fleet summary --by arch|cpus|memory_gib|kernel_series` on real logs (values read by hand from
the logs' lines, quoted below), an old store without those fields, and systemd-analyze pastes.

Logs: tests/data/hw (provenance in its README) and tests/data/debian-6.1-cloud-smp2.log (a QEMU
boot of Debian's 6.1 cloud kernel); tests/data/systemd-252-collector-tcg.txt (systemd-analyze
output of a Debian 12 image, as `analyze` reads it).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_here import run_json

from bootscope.store import Store
from bootscope.store.fleet import OLD_NEVER_INIT, FleetBoot, FleetFile, record_files

DATA = Path(__file__).resolve().parents[1] / "data"
# file: (arch, cpus, memory_gib, kernel_series), read by hand:
LOGS = {
    # "Linux version 4.19.0-323-arm64", "smp: Brought up 1 node, 8 CPUs", "Memory: 16334756K/16777216K"
    "hw/arm64-xgene-mustang-4.19-dmesg.log": ("arm64", "8", "16", "4.19"),
    # "5.14.0-570.23.1.el9_6.x86_64", "Brought up 2 nodes, 384 CPUs", "Memory: 2007276K/1610305216K"
    # (1535.7 GiB: a 1.5 TiB server)
    "hw/x86-supermicro-384cpu-5.14-el9-dmesg.log": ("x86_64", "384", "1536", "5.14"),
    # "6.1.0-56-cloud-amd64", "Brought up 1 node, 2 CPUs", "Memory: 260860K/523768K" (512 MiB guest)
    "debian-6.1-cloud-smp2.log": ("x86_64", "2", "0.5", "6.1"),
    # "3.16.0-4-amd64", "x86: Booted up 1 node, 2 CPUs", "Memory: 3938856K/4092744K" (3.9 GiB)
    "hw/x86-alienware-m11x-3.16-dmesg.log": ("x86_64", "2", "4", "3.16"),
    # "5.10.113-7.oe2403.riscv64", "Brought up 1 node, 4 CPUs", "Memory: 7381924K/8386560K"
    "hw/riscv64-milkv-meles-th1520-5.10-uboot-opensbi-panic.log": ("riscv64", "4", "8", "5.10"),
}
FIELDS = ("arch", "cpus", "memory_gib", "kernel_series")


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    return run_json(capsys, *args)


@pytest.fixture
def fleet_db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    db = str(tmp_path / "f.db")
    _json(capsys, "fleet", "import", *(str(DATA / name) for name in LOGS), "--db", db, "-j", "1")
    return db


@pytest.mark.parametrize("field", FIELDS)
def test_by_a_field_the_logs_give(field: str, fleet_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    index = FIELDS.index(field)
    summary = _json(capsys, "fleet", "summary", "--by", field, "--db", fleet_db)
    boots = {g[field]: g["boots"] for g in summary["groups"]}  # type: ignore[attr-defined]
    expected: dict[str, int] = {}
    for values in LOGS.values():
        expected[values[index]] = expected.get(values[index], 0) + 1
    assert boots == expected


def test_groups_come_in_natural_order(fleet_db: str, capsys: pytest.CaptureFixture[str]) -> None:
    def order(field: str) -> list[str]:
        summary = _json(capsys, "fleet", "summary", "--by", field, "--db", fleet_db)
        return [g[field] for g in summary["groups"]]  # type: ignore[attr-defined]

    assert order("cpus") == ["2", "4", "8", "384"]
    assert order("memory_gib") == ["0.5", "4", "8", "16", "1536"]
    assert order("kernel_series") == ["3.16", "4.19", "5.10", "5.14", "6.1"]


def test_the_metadata_csv_wins_over_the_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "xgene.log"
    shutil.copy(DATA / "hw/arm64-xgene-mustang-4.19-dmesg.log", log)
    (tmp_path / "hosts.csv").write_text("file,arch\nxgene.log,aarch64\n")
    db = str(tmp_path / "m.db")
    _json(capsys, "fleet", "import", str(log), "--meta", str(tmp_path / "hosts.csv"), "--db", db)
    summary = _json(capsys, "fleet", "summary", "--by", "arch,cpus", "--db", db)
    assert [(g["arch"], g["cpus"]) for g in summary["groups"]] == [("aarch64", "8")]  # type: ignore[attr-defined]


def test_an_old_store_opens_and_reads_as_it_can(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Boots stored as an older bootscope stored them: no log fields, and a cut log as ``failed``."""
    db = tmp_path / "old.db"
    with Store.open(db) as store:
        record_files(
            store,
            [
                FleetFile(
                    "a.log",
                    "0" * 64,
                    "dmesg",
                    {"model": "m1"},
                    (FleetBoot(1, "ok", "", "6.1.0-56-cloud-amd64", {}, {"kernel_init_s": 3.19}),),
                ),
                FleetFile(
                    "b.log",
                    "1" * 64,
                    "dmesg",
                    {"model": "m1"},
                    (FleetBoot(2, "failed", OLD_NEVER_INIT, "2.6.26-rc9"),),
                ),
            ],
        )
    by_series = _json(capsys, "fleet", "summary", "--by", "kernel_series", "--db", str(db))
    groups = {g["kernel_series"]: g for g in by_series["groups"]}  # type: ignore[attr-defined]
    assert set(groups) == {"2.6.26", "6.1"}
    # the old "no Run /init" failure is read as incomplete: no failure was ever seen in that log
    assert (groups["2.6.26"]["failed"], groups["2.6.26"]["incomplete"]) == (0, 1)
    by_arch = _json(capsys, "fleet", "summary", "--by", "arch", "--db", str(db))
    assert [g["arch"] for g in by_arch["groups"]] == [None]  # type: ignore[attr-defined]
    assert any("no boot has the field arch" in note for note in by_arch["notes"])  # type: ignore[attr-defined]


def test_a_systemd_analyze_paste_is_userspace_timings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "s.db")
    html = tmp_path / "page.html"
    html.write_text("<html><body><p>1s later</p><pre>nothing here</pre></body></html>\n")
    paste = DATA / "systemd-252-collector-tcg.txt"
    imported = _json(capsys, "fleet", "import", str(paste), str(html), "--db", db)
    assert imported["imported"] == 1 and imported["systemd_pastes"] == 1
    assert [Path(b["file"]).name for b in imported["bad"]] == ["page.html"]  # type: ignore[attr-defined]
    # "Startup finished in 22.076s (kernel) + 56.055s (userspace) = 1min 18.131s": systemd's userspace
    userspace = _json(
        capsys, "fleet", "summary", "--by", "format", "--metric", "systemd_userspace_s", "--db", db
    )
    (group,) = userspace["groups"]  # type: ignore[misc]
    assert group["format"] == "systemd-analyze" and group["p50"] == pytest.approx(56.055)
    assert (group["ok"], group["failed"], group["incomplete"]) == (1, 0, 0)
    # blame's first line: "31.493s dev-vda.device"
    blame = _json(capsys, "fleet", "summary", "--metric", "unit:dev-vda.device", "--db", db)
    assert blame["groups"][0]["p50"] == pytest.approx(31.493)  # type: ignore[index]

"""The libvirt kind against a real libvirt daemon (Debian's libvirtd in a private mount namespace,
tests/libvirt_daemon.py) and a domain the test defines: the pinned Debian cloud kernel with
bootscope's shell initramfs (a root shell on the serial console after the marker, the kernel inside
for kexec), booted by libvirt's own QEMU under TCG.

Every number is read again from the stored consoles by the tests' own readers: the command line the
kernel printed (tests/lab/printed_cmdline.py), the marker's host stamp against the boot's start, the
banners. After each run the domain is shut off and its definition is byte for byte the one defined.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from libvirt_daemon import Daemon, define_domain, domain_xml

from bootscope.lab.qemu.shell_initramfs import build_shell_initramfs
from bootscope.store import Store
from tests.cli_here import run_in_process
from tests.lab.printed_cmdline import printed_cmdline

OWN = "console=ttyS0 panic=-1"
NAME = "bootscope-shell"
WORD = "bootscope.tune_cold=1"  # a word no kernel reads: an arm that differs only in its line
MARKER = "BOOTSCOPE-MARKER"


@dataclass(frozen=True)
class Domain:
    """The test's domain: its daemon's URI, its definition as libvirt keeps it, its TARGET text."""

    uri: str
    xml: str

    @property
    def target(self) -> str:
        return f"libvirt:{NAME}?connect={self.uri}"

    def state(self) -> tuple[bool, str]:
        """Whether it runs, and its inactive definition now."""
        import libvirt

        conn = libvirt.open(self.uri)
        try:
            domain = conn.lookupByName(NAME)
            return bool(domain.isActive()), str(domain.XMLDesc(libvirt.VIR_DOMAIN_XML_INACTIVE))
        finally:
            conn.close()


@pytest.fixture(scope="module")
def domain(libvirt_daemon: Daemon, cloud_kernel: Path) -> Domain:
    initrd = build_shell_initramfs(cloud_kernel)
    xml = define_domain(libvirt_daemon.uri, domain_xml(NAME, cloud_kernel, initrd, OWN))
    return Domain(libvirt_daemon.uri, xml)


def _left_alone(domain: Domain) -> None:
    running, xml = domain.state()
    assert not running, "bootscope left the domain running"
    assert xml == domain.xml, "bootscope changed the domain's definition"


@pytest.mark.boot
def test_a_domain_boots_cold_warm_and_by_kexec(
    domain: Domain, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "libvirt.db"
    code = run_in_process(
        "run", domain.target, "--reboot", "cold,warm,kexec", "-n", "2", "--seed", "2", "--timeout", "120",
        "--db", str(db), "--format", "json",
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    run = json.loads(out)["experiment"]
    with Store.open(db) as store:
        experiment = store.experiment(run)
        assert experiment.accel == "tcg"  # the domain's type='qemu', as its definition says
        boots = store.boots(run)
        assert Counter(boot.variant for boot in boots) == {"cold": 2, "warm": 2, "kexec": 2}
        for boot in boots:
            assert boot.outcome == "ok", boot.reason
            lines = store.boot_log(run, boot.index)
            texts = [line.text for line in lines]
            assert sum("Linux version " in text for text in texts) == 1, boot.variant  # one new boot
            assert printed_cmdline(texts) == OWN, boot.variant
            marker = next(line for line in lines if MARKER in line.text)
            assert marker.host_ns is not None and boot.host_start_ns is not None
            by_hand = (marker.host_ns - boot.host_start_ns) / 1e9
            assert boot.metrics["restart_to_marker_s"] == pytest.approx(by_hand, abs=1e-3), boot.variant
            if boot.variant == "cold":  # from power-on: the console was open before the first instruction
                assert texts.index(next(t for t in texts if "Linux version " in t)) <= 2, texts[:5]
                assert (boot.metrics.get("poweron_to_kernel_s") or 0.0) > 0.0
            else:  # ordered on the console's shell: the old kernel's last words, then the new banner
                assert any("kexec -l" in part for part in boot.command) == (boot.variant == "kexec")
    _left_alone(domain)


@pytest.mark.boot
def test_a_domain_is_tuned_from_power_on_each_arm_with_its_own_line(
    domain: Domain, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "tune.db"
    code = run_in_process(
        "tune", domain.target, "--reboot", "cold", "--only", "none", "--try", WORD, "-n", "4", "--seed", "5",
        "--budget", "17", "--timeout", "120", "--db", str(db), "--format", "json",
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    result = json.loads(out)
    assert result["baseline"]["append"] == OWN  # the domain's own <cmdline>
    (knob,) = result["candidates"]
    lines = {"baseline": OWN, "knob": f"{OWN} {WORD}"}
    probe = result["runs"][0]
    booted = 0
    with Store.open(db) as store:
        for run in result["runs"]:
            for boot in store.boots(run):
                assert boot.outcome == "ok", boot.reason
                given = printed_cmdline([line.text for line in store.boot_log(run, boot.index)])
                name = "baseline" if run == probe or boot.variant == "baseline" else "knob"
                assert given == lines[name], (run, boot.variant, given)
                booted += 1
    assert 9 <= booted == result["boots_spent"] <= 17  # the probe, 4 boots a side at least; the budget
    assert knob["knob"] == f"+{WORD}"
    _left_alone(domain)  # each arm's line went to a transient start: the definition is unchanged


@pytest.mark.boot
def test_a_latency_run_measures_inside_the_domain(
    domain: Domain, cloud_kernel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "latency.db"
    code = run_in_process(
        "latency", "run", domain.target, "--duration", "3s", "--interval", "1000", "--samples", "1",
        "--seed", "1", "--db", str(db), "--format", "json",
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    document = json.loads(out)
    text = json.dumps(document)
    release = cloud_kernel.name.removeprefix("vmlinuz-")
    assert release in text, "the facts are the domain's kernel's, not this host's"
    _left_alone(domain)


@pytest.mark.boot
def test_target_check_reads_the_definition_and_names_what_is_missing(
    domain: Domain, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run_in_process("target", "check", domain.target, "--format", "json")
    out, err = capsys.readouterr()
    assert code == 0, err
    checks = {check["name"]: check for check in json.loads(out)["checks"]}
    assert checks["domain"]["status"] == "ok" and "shut off" in checks["domain"]["found"]
    assert checks["command line"]["found"] == f"direct kernel boot: {OWN}"
    assert checks["accelerator"]["status"] == "warn"  # type='qemu': TCG
    code = run_in_process(
        "target", "check", f"libvirt:no-such-domain?connect={domain.uri}", "--format", "json"
    )
    out, _ = capsys.readouterr()
    assert code == 1
    assert {c["name"]: c["status"] for c in json.loads(out)["checks"]}["domain"] == "bad"


@pytest.mark.boot
def test_a_missing_domain_is_one_line_and_stores_nothing(
    domain: Domain, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "none.db"
    code = run_in_process(
        "run", f"libvirt:no-such-domain?connect={domain.uri}", "--reboot", "cold", "-n", "1", "--db", str(db)
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 3 and len(err) == 1 and "no-such-domain" in err[0], err
    with Store.open(db) as store:
        assert store.list_experiments() == []

"""One Where: the TARGET text parsed once through one registry of kinds, and the seam's rules held
against the code itself (no scheme looked at outside lab/where.py, no placeholder target handed to the
runner, no use case writing the environment, every kind a module with its hooks)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from bootscope.errors import InputError
from bootscope.lab.targets import open_target, target_for
from bootscope.lab.targets.fake import FakeRebootingMachine, FakeTarget
from bootscope.lab.targets.libvirt.address import parse_domain, stored_domain
from bootscope.lab.targets.libvirt.checks import advise_domain
from bootscope.lab.where import (
    KINDS,
    LABGRID,
    LIBVIRT,
    LOCAL,
    QEMU,
    QEMU_HERE,
    SSH,
    kind_of,
    parse_where,
    stored_where,
)
from bootscope.usecases.tune.machines import ADAPTERS

PACKAGE = Path(__file__).resolve().parents[2] / "bootscope"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("local", LOCAL),
        ("localhost.img", QEMU),
        ("ssh://root@host", SSH),
        ("labgrid:env.yaml:main", LABGRID),
        ("libvirt:vm1", LIBVIRT),
        ("libvirt:vm1?connect=qemu:///system", LIBVIRT),
        ("debian:cloud", QEMU),
        ("/boot/vmlinuz", QEMU),
        ("", QEMU),
    ],
)
def test_each_target_text_has_one_kind(text: str, kind: str) -> None:
    assert kind_of(text).name == kind


def test_an_ssh_url_is_written_as_stored_with_its_files_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = tmp_path / "id"
    key.write_text("k")
    monkeypatch.chdir(tmp_path)
    where = parse_where("ssh://root@[::1]:2222", identity="id", console="cat /dev/ttyUSB0")
    assert (where.kind, where.address, where.identity) == (SSH, "ssh://root@[::1]:2222", str(key))
    assert (
        where.console == "cat /dev/ttyUSB0"
        and kind_of(where.address).machine
        and kind_of(where.address).runs_tools
    )


def test_a_board_is_named_by_its_environments_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "env.yaml").write_text("targets: {}\n")
    monkeypatch.chdir(tmp_path)
    assert parse_where("labgrid:env.yaml").address == f"labgrid:{tmp_path / 'env.yaml'}:main"
    with pytest.raises(InputError, match="no environment file"):
        parse_where("labgrid:missing.yaml")


def test_a_domain_keeps_the_connection_it_was_reached_through(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIBVIRT_DEFAULT_URI", "qemu+ssh://root@host/system")
    assert parse_where("libvirt:vm1").address == "libvirt:vm1?connect=qemu+ssh://root@host/system"
    assert parse_where("libvirt:vm1?connect=qemu:///session").address == "libvirt:vm1?connect=qemu:///session"
    monkeypatch.delenv("LIBVIRT_DEFAULT_URI")
    assert stored_domain("libvirt:vm1").url == "libvirt:vm1"
    spec = parse_domain("libvirt:vm1?connect=qemu:///system?socket=/run/x/sock")
    assert (spec.name, spec.uri) == ("vm1", "qemu:///system?socket=/run/x/sock")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("libvirt:", "give the domain's name"),
        ("libvirt:a/b", "give the domain's name"),
        ("libvirt:vm 1", "give the domain's name"),
        ("libvirt:vm?connect=", "bad URI"),
        ("libvirt:vm?connect=not a uri", "bad URI"),
        ("ssh://host", "give the user"),
    ],
)
def test_a_bad_address_is_one_line(text: str, said: str) -> None:
    with pytest.raises(InputError, match=said):
        parse_where(text)


@pytest.mark.parametrize("text", ["local", "labgrid:x.yaml", "libvirt:vm", "debian:cloud"])
def test_keys_are_refused_where_the_kind_takes_none(text: str) -> None:
    with pytest.raises(InputError, match="are for ssh://"):
        parse_where(text, identity="/id")


def test_a_guest_plan_is_this_hosts_qemu_and_a_stored_place_reads_no_file() -> None:
    assert parse_where("debian:cloud").address == QEMU_HERE
    gone = stored_where("labgrid:/no/such/env.yaml:main")  # a run resumed where its file is gone
    assert (gone.kind, gone.address) == (LABGRID, "labgrid:/no/such/env.yaml:main")


def test_the_runner_is_given_its_place_or_opens_the_plans() -> None:
    fake = FakeTarget()
    assert target_for(stored_where("debian:cloud"), fake) is fake  # any target that boots guests
    machine = FakeRebootingMachine()
    assert target_for(stored_where(machine.name), machine) is machine  # the place the plan names
    opened = target_for(stored_where("local"), fake)  # not the plan's: the plan's is opened
    assert opened is not fake and opened.name == "local"
    assert open_target(stored_where("debian:cloud")).name == QEMU_HERE


def test_every_kind_is_a_module_with_its_hooks_and_every_tuned_kind_an_adapter() -> None:
    for kind in KINDS:
        module = importlib.import_module(kind.module)
        assert callable(getattr(module, "check_where", None)), kind.name
        assert callable(getattr(module, "open_where", None)), kind.name
        assert bool(kind.tune_reboots) == (kind.name in ADAPTERS), kind.name
    assert [k.name for k in KINDS][-1] == QEMU and KINDS[-1].scheme == ""  # takes what no other does


def _modules() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text())) for path in sorted(PACKAGE.rglob("*.py"))]


def test_no_scheme_is_looked_at_outside_the_one_place() -> None:
    schemes = {kind.scheme for kind in KINDS if kind.scheme and not kind.exact}
    found = []
    for path, tree in _modules():
        if path == PACKAGE / "lab/where.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and node.value in schemes:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.value!r}")
    assert found == []


def test_no_use_case_writes_the_environment_or_hands_the_runner_a_placeholder() -> None:
    found = []
    for path, tree in _modules():
        where = path.relative_to(PACKAGE).parts[0]
        for node in ast.walk(tree):
            text = ast.unparse(node) if isinstance(node, ast.Assign | ast.Call) else ""
            if where == "usecases" and isinstance(node, ast.Assign) and "os.environ[" in text.split("=")[0]:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} writes os.environ")
            if where in ("usecases", "cli") and isinstance(node, ast.Call) and text == "LocalQemu()":
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} LocalQemu()")
            if (
                where == "usecases"
                and isinstance(node, ast.Call)
                and text.startswith(("os.putenv", "os.environ."))
                and not text.startswith("os.environ.get")
            ):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {text[:40]}")
    assert found == []


def test_a_domains_definition_is_advised_without_a_daemon() -> None:
    disk = "<domain type='kvm'><os><type>hvm</type></os><on_reboot>destroy</on_reboot><devices/></domain>"
    checks = {check.name: check for check in advise_domain(disk)}
    assert checks["console"].status == "bad"
    assert checks["command line"].status == "warn" and "disk" in checks["command line"].found
    assert checks["accelerator"].status == "ok"
    assert checks["on_reboot"].status == "warn"
    direct = (
        "<domain type='qemu'><os><kernel>/k</kernel><cmdline>root=/dev/vda</cmdline></os>"
        "<devices><serial type='pty'/></devices></domain>"
    )
    checks = {check.name: check for check in advise_domain(direct)}
    assert (
        checks["console"].status == "ok"
        and checks["command line"].found == "direct kernel boot: root=/dev/vda"
    )
    assert checks["kernel console"].status == "warn"  # no console= on its line
    assert checks["accelerator"].status == "warn" and checks["on_reboot"].status == "ok"

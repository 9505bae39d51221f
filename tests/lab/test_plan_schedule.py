"""Plans from --variant texts and TOML files, and the seeded, interleaved order of boots."""

from __future__ import annotations

import gzip
import json
import random
import shutil
from collections import Counter
from pathlib import Path

import pytest

from bootscope.errors import InputError
from bootscope.lab.plans.boot import Plan, VariantSpec, build_plan, parse_variant, plan_from_dict
from bootscope.lab.plans.schedule import build_schedule
from bootscope.lab.plans.settings import GivenSettings
from bootscope.lab.qemu.process import build_command
from bootscope.lab.targets.qemu import LocalQemu
from bootscope.lab.workloads.boot import BootWorkload


def _plan(**kwargs: object) -> Plan:
    settings = {"samples_per_variant": None, "seed": 3, **kwargs.pop("settings", {})}  # type: ignore[dict-item]
    return build_plan(
        kernel=kwargs.get("kernel", "debian:cloud"),  # type: ignore[arg-type]
        base_options=kwargs.get("base_options", []),  # type: ignore[arg-type]
        variant_texts=kwargs.get("variants", []),  # type: ignore[arg-type]
        plan_file=kwargs.get("plan_file"),  # type: ignore[arg-type]
        settings=GivenSettings(**settings),
    )


def test_variant_options_apply_on_top_of_the_base() -> None:
    base = VariantSpec(name="x", kernel="k", append="console=ttyS0")
    spec = parse_variant("fast:append=quiet,smp=2,mem=1024,cpu=max,qemu-arg=-device virtio-rng-pci", base)
    assert spec.name == "fast"
    assert spec.append == "console=ttyS0 quiet"
    assert (spec.smp, spec.mem_mb, spec.cpu) == (2, 1024, "max")
    assert spec.qemu_args == ("-device", "virtio-rng-pci")
    assert base.append == "console=ttyS0"  # the base is untouched


def test_commas_inside_free_text_values_stay_in_the_value() -> None:
    base = VariantSpec(name="x", kernel="k")
    spec = parse_variant("rng:qemu-arg=-device virtio-rng-pci,id=rng0,icount=3", base)
    assert spec.qemu_args == ("-device", "virtio-rng-pci,id=rng0")
    assert spec.icount_shift == 3
    assert parse_variant("plain", base) == VariantSpec(name="plain", kernel="k")
    assert parse_variant("plain:", base).name == "plain"


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("a:colour=blue", "colour"),
        ("a:smp=two", "smp"),
        ("a:mem=0", "mem"),
        ("a:icount=99", "icount"),
        ("a:smp", "'smp' is not OPTION=VALUE"),
        ("bad name:smp=1", "NAME:OPTION=VALUE"),
        ("a:marker=(unclosed", "marker"),
    ],
)
def test_bad_variant_text_names_the_problem(text: str, named: str) -> None:
    with pytest.raises(InputError) as info:
        parse_variant(text, VariantSpec(name="x", kernel="k"))
    assert named in str(info.value)


def test_build_plan_defaults_and_seed() -> None:
    plan = _plan(settings={"seed": None})
    assert [v.name for v in plan.variants] == ["default"]
    assert plan.samples_per_variant == 24 and plan.warmup_per_variant == 1
    assert 0 <= plan.seed < 2**31
    two = _plan(variants=["a:", "b:append=quiet"], base_options=[("append", "initcall_debug")])
    assert [v.append for v in two.variants] == ["initcall_debug", "initcall_debug quiet"]
    with pytest.raises(InputError, match="unique"):
        _plan(variants=["a:", "a:smp=2"])
    with pytest.raises(InputError, match="accel"):
        _plan(settings={"accel": "xen"})
    with pytest.raises(InputError, match="no kernel"):
        _plan(kernel=None)


def test_plan_round_trips_through_its_stored_dict() -> None:
    plan = _plan(variants=["a:qemu-arg=-cpu max,command=echo hi", "b:icount=4"], settings={"jobs": 2})
    assert plan_from_dict(plan.to_dict()) == plan


def test_toml_plan(tmp_path: Path) -> None:
    path = tmp_path / "plan.toml"
    path.write_text(
        'kernel = "debian:cloud"\nappend = "initcall_debug"\nsamples = 5\nwarmup = 0\nseed = 11\n'
        'quiet-host = true\n\n[variants.base]\n\n[variants.quiet]\nappend = "quiet"\nsmp = 2\n'
        'qemu-arg = ["-cpu", "max"]\n'
    )
    plan = _plan(plan_file=path, kernel=None, settings={"seed": None})
    assert (plan.samples_per_variant, plan.warmup_per_variant, plan.seed, plan.quiet_host) == (5, 0, 11, True)
    assert [(v.name, v.append, v.smp, v.qemu_args) for v in plan.variants] == [
        ("base", "initcall_debug", 1, ()),
        ("quiet", "initcall_debug quiet", 2, ("-cpu", "max")),
    ]
    # The command line wins over the file.
    assert _plan(plan_file=path, kernel=None, settings={"samples_per_variant": 3}).samples_per_variant == 3
    path.write_text("[variants.a]\ncolour = 1\n")
    with pytest.raises(InputError, match="colour"):
        _plan(plan_file=path)
    path.write_text("samples = [1\n")
    with pytest.raises(InputError, match="not valid TOML"):
        _plan(plan_file=path)


def test_schedule_is_interleaved_seeded_and_warmups_first() -> None:
    names = ["a", "b", "c"]
    slots = build_schedule(names, samples=24, warmup=2, seed=99)
    assert [s.index for s in slots] == list(range(1, 3 * 26 + 1))
    assert all(s.warmup == (s.round < 2) for s in slots)
    # Each round holds every variant exactly once, so drift hits every variant alike.
    for round_number in range(26):
        assert sorted(s.variant for s in slots if s.round == round_number) == names
    assert Counter(s.variant for s in slots if not s.warmup) == {"a": 24, "b": 24, "c": 24}
    # The order is random.Random(seed) shuffling each round, recomputed here independently.
    rng = random.Random(99)
    expected = []
    for _ in range(26):
        order = list(names)
        rng.shuffle(order)
        expected += order
    assert [s.variant for s in slots] == expected
    assert build_schedule(names, 24, 2, 99) == slots
    assert [s.variant for s in build_schedule(names, 24, 2, 100)] != expected
    with pytest.raises(ValueError):
        build_schedule(names, -1, 0, 1)


def test_a_variant_booted_more_often_is_in_every_measured_round_that_often() -> None:
    slots = build_schedule(["base", "k1", "k2"], samples=3, warmup=1, seed=5, slots_a_round={"base": 4})
    assert [s.index for s in slots] == list(range(1, 3 + 3 * 6 + 1))
    for round_number in range(4):
        counts = Counter(s.variant for s in slots if s.round == round_number)
        times = 1 if round_number == 0 else 4  # warm-ups: every variant once
        assert counts == {"base": times, "k1": 1, "k2": 1}
    # The same shuffle of each round's list, the repeated name in it as often as asked.
    rng = random.Random(5)
    expected = []
    for round_number in range(4):
        order = ["base", "k1", "k2"] if round_number == 0 else ["base"] * 4 + ["k1", "k2"]
        rng.shuffle(order)
        expected += order
    assert [s.variant for s in slots] == expected
    # Without it, the order is the one every stored run was booted in (resume depends on it).
    assert build_schedule(["a", "b"], 4, 0, 9, {}) == build_schedule(["a", "b"], 4, 0, 9)


def test_file_option_from_the_command_line_a_variant_and_toml(tmp_path: Path) -> None:
    host = tmp_path / "x.conf"
    host.write_text("x")
    other = tmp_path / "y:z.conf"  # a colon in the host path: the guest path is after the last one
    other.write_text("y")
    plan = _plan(base_options=[("file", f"{host}:/etc/x")], variants=["a:", f"b:file={other}:/etc/y"])
    assert [v.files for v in plan.variants] == [
        ((str(host), "/etc/x"),),
        ((str(host), "/etc/x"), (str(other), "/etc/y")),
    ]
    assert plan_from_dict(json.loads(json.dumps(plan.to_dict()))) == plan
    path = tmp_path / "plan.toml"
    path.write_text(f'kernel = "k"\nfile = ["{host}:/etc/x"]\n[variants.a]\nfile = "{host}:/root/x"\n')
    (variant,) = _plan(plan_file=path, kernel=None).variants
    assert variant.files == ((str(host), "/etc/x"), (str(host), "/root/x"))


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("{tmp}/missing:/etc/x", "no such host file"),
        ("{tmp}/x.conf:etc/x", "must be absolute"),
        ("{tmp}/x.conf:/etc/../../x", "must be absolute"),
        ("{tmp}/x.conf", "HOST_PATH:GUEST_PATH"),
        (":/etc/x", "HOST_PATH:GUEST_PATH"),
    ],
)
def test_bad_file_option_is_an_input_error(value: str, message: str, tmp_path: Path) -> None:
    (tmp_path / "x.conf").write_text("x")
    with pytest.raises(InputError, match=message):
        _plan(base_options=[("file", value.replace("{tmp}", str(tmp_path)))])


def test_disk_option_needs_a_marker_and_no_initramfs_extras(tmp_path: Path) -> None:
    image = tmp_path / "root.img"
    image.write_bytes(b"\0" * 1024)
    plan = _plan(base_options=[("disk", str(image)), ("marker", "login:")], variants=["a:", "b:append=quiet"])
    assert [v.config()["disk"] for v in plan.variants] == [str(image), str(image)]
    assert plan_from_dict(plan.to_dict()) == plan
    with pytest.raises(InputError, match="needs --marker"):
        _plan(variants=[f"a:disk={image}"])
    with pytest.raises(InputError, match="command go into bootscope's initramfs"):
        _plan(base_options=[("disk", str(image)), ("marker", "x"), ("command", "true")])
    with pytest.raises(InputError, match="no such disk image"):
        _plan(variants=[f"a:disk={tmp_path / 'none.img'},marker=x"])
    # With the user's own initrd the disk is only attached, and the initrd may end on bootscope's marker.
    both = _plan(base_options=[("disk", str(image)), ("initrd", str(image))])
    assert both.variants[0].disk == str(image)
    with pytest.raises(InputError, match="your own initrd"):
        _plan(base_options=[("initrd", str(image)), ("file", f"{image}:/x")])


@pytest.mark.skipif(shutil.which("qemu-img") is None, reason="qemu-img not installed")
def test_disk_variant_boots_without_bootscopes_initramfs(cloud_kernel: Path, tmp_path: Path) -> None:
    image = tmp_path / "root.img"
    image.write_bytes(b"\0" * 65536)
    host = tmp_path / "x.conf"
    host.write_text("x")
    plan = _plan(
        kernel=str(cloud_kernel),
        variants=[f"disk:disk={image},marker=login:,append=root=/dev/vda", f"ram:file={host}:/etc/x"],
    )
    workload = BootWorkload(plan)
    workload.prepare(LocalQemu(), "tcg")
    configs = workload.configs
    disk, ram = configs["disk"], configs["ram"]
    assert (disk.initrd, disk.disk, disk.disk_format, disk.marker_regex) == (None, image, "raw", "login:")
    assert "-initrd" not in build_command(disk) and "root=/dev/vda" in disk.append
    # The other variant gets bootscope's initramfs, holding the file (newc names have no leading /).
    assert ram.initrd is not None and ram.disk is None
    assert b"etc/x\0" in gzip.decompress(ram.initrd.read_bytes())

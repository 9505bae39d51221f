"""bootscope's root initramfs for a kernel foreign to an image: module order, module files, /init.

Fast tests on made-up module trees (module files are only bytes with a ``.modinfo``-like field here:
nothing loads them); the real boot of the pinned kernel on the test image is in
tests/lab/test_foreign_kernel_boot.py."""

from __future__ import annotations

import gzip
import lzma
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_here import run_in_process
from kernel_pin import TEST_IMAGE

from bootscope.errors import BootError, InputError
from bootscope.lab.qemu.initramfs import read_newc
from bootscope.lab.qemu.kernels import read_image_release
from bootscope.lab.qemu.root_initramfs import (
    LOG_PREFIX,
    build_root_initramfs,
    load_order,
    module_depends,
    module_name,
    read_module,
    root_init_script,
)

RELEASE = "9.9.9-test"
# The 6.1 cloud kernel's dependencies (their depends= fields), the shape the order must respect.
DEPENDS = {
    "virtio_pci": ("virtio_pci_modern_dev", "virtio_pci_legacy_dev", "virtio", "virtio_ring"),
    "virtio_pci_modern_dev": (),
    "virtio_pci_legacy_dev": (),
    "virtio": ("virtio_ring",),
    "virtio_ring": (),
    "virtio_blk": ("virtio", "virtio_ring"),
    "virtio_net": ("net_failover", "virtio", "virtio_ring"),
    "net_failover": ("failover",),
    "failover": (),
}


def _modinfo(depends: str, softdep: str | None = None) -> bytes:
    soft = f"softdep=pre: {softdep}\0".encode() if softdep else b""
    return b"\x7fELF junk\0license=GPL\0" + soft + f"depends={depends}\0".encode() + b"vermagic=x\0"


def test_every_module_comes_after_what_it_depends_on_and_only_once() -> None:
    order = load_order(
        ("virtio_pci", "virtio_blk", "ext4", "virtio_net"),
        DEPENDS,
        frozenset({"ext4"}),
        lambda name: DEPENDS[name],
        required=("virtio_pci", "virtio_blk", "ext4"),
    )
    assert sorted(order) == sorted(DEPENDS) and len(set(order)) == len(order)
    for name in order:
        for dependency in DEPENDS[name]:
            assert order.index(dependency) < order.index(name), (dependency, name)


def test_built_in_drivers_and_missing_optional_ones_are_skipped() -> None:
    # 6.12's cloud kernel: virtio_pci (and virtio, virtio_ring) built in; no virtio_net module.
    available = {name: DEPENDS[name] for name in ("virtio_blk",)}
    builtin = frozenset({"virtio_pci", "virtio", "virtio_ring", "ext4"})
    order = load_order(
        ("virtio_pci", "virtio_blk", "ext4", "virtio_net"),
        available,
        builtin,
        lambda name: DEPENDS[name],
        required=("virtio_pci", "virtio_blk", "ext4"),
    )
    assert order == ("virtio_blk",)


def test_a_required_driver_neither_built_in_nor_a_module_is_refused() -> None:
    with pytest.raises(InputError, match="no virtio_blk module and no built-in virtio_blk driver"):
        load_order(("virtio_blk",), {}, frozenset(), lambda name: (), required=("virtio_blk",))


def test_a_dependency_cycle_ends() -> None:
    cyclic = {"a": ("b",), "b": ("a",)}
    assert sorted(load_order(("a",), cyclic, frozenset(), lambda name: cyclic[name])) == ["a", "b"]


def test_depends_and_softdep_fields_are_read_from_the_module() -> None:
    assert module_depends(_modinfo("virtio,virtio_ring")) == ("virtio", "virtio_ring")
    assert module_depends(_modinfo("")) == ()
    assert module_depends(_modinfo("jbd2,mbcache", softdep="crc32c")) == ("jbd2", "mbcache", "crc32c")
    assert module_depends(b"\x00\xff" * 1000) == ()  # junk: no field, no error
    assert module_name("virtio-rng.ko.xz") == "virtio_rng" and module_name("virtio_blk.ko") == "virtio_blk"


def test_compressed_modules_are_decompressed(tmp_path: Path) -> None:
    elf = _modinfo("virtio")
    (tmp_path / "a.ko.xz").write_bytes(lzma.compress(elf))
    (tmp_path / "b.ko.gz").write_bytes(gzip.compress(elf))
    (tmp_path / "c.ko").write_bytes(elf)
    zstd = subprocess.run(["zstd", "-q", "-o", str(tmp_path / "d.ko.zst"), "-"], input=elf, check=True)
    assert zstd.returncode == 0
    names = ("a.ko.xz", "b.ko.gz", "c.ko", "d.ko.zst")
    assert all(read_module(tmp_path / name) == elf for name in names)
    (tmp_path / "e.ko.xz").write_bytes(b"not xz at all")
    with pytest.raises(BootError, match="cannot read kernel module"):
        read_module(tmp_path / "e.ko.xz")


def test_init_loads_in_order_and_is_valid_shell() -> None:
    script = root_init_script(RELEASE, (("a", "kernel/a.ko"), ("b_c", "kernel/b-c.ko")))
    assert script.index('load a "$mods/kernel/a.ko"') < script.index('load b_c "$mods/kernel/b-c.ko"')
    assert '[ -d "/sys/module/$1" ] || insmod "$2"' in script
    assert f"mods=/lib/modules/{RELEASE}" in script and 'exec switch_root /newroot "$init"' in script
    busybox = shutil.which("busybox") or "/bin/busybox"
    checked = subprocess.run([busybox, "sh", "-n", "-c", script], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr


def _kernel_tree(top: Path, modules: dict[str, bytes], builtin: tuple[str, ...] = ("ext4",)) -> Path:
    """Return DIR/boot/vmlinuz-RELEASE of a made-up kernel package with ``modules`` (relative path ->
    file bytes) under DIR/lib/modules/RELEASE."""
    kernel = top / "boot" / f"vmlinuz-{RELEASE}"
    kernel.parent.mkdir(parents=True)
    kernel.write_bytes(b"not booted")
    modules_dir = top / "lib" / "modules" / RELEASE
    (modules_dir / "kernel").mkdir(parents=True)
    (modules_dir / "modules.builtin").write_text("".join(f"kernel/fs/{name}/{name}.ko\n" for name in builtin))
    for relative, data in modules.items():
        (modules_dir / relative).parent.mkdir(parents=True, exist_ok=True)
        (modules_dir / relative).write_bytes(data)
    return kernel


def test_the_archive_holds_the_decompressed_modules_and_the_init(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    blk, pci, virtio = _modinfo("virtio"), _modinfo("virtio"), _modinfo("")
    kernel = _kernel_tree(
        tmp_path / "pkg",
        {
            "kernel/drivers/block/virtio_blk.ko.xz": lzma.compress(blk),
            "kernel/drivers/virtio/virtio_pci.ko": pci,
            "kernel/drivers/virtio/virtio.ko.gz": gzip.compress(virtio),
            "kernel/drivers/net/unrelated.ko": _modinfo(""),
        },
    )
    root = build_root_initramfs(kernel, RELEASE)
    assert root.modules[0].name == "virtio" and root.builtin == ("ext4",)
    assert {m.name for m in root.modules} == {"virtio", "virtio_pci", "virtio_blk"}
    assert "virtio_blk" in root.describe() and "built in: ext4" in root.describe()
    entries = {name: data for name, _mode, data in read_newc(gzip.decompress(root.path.read_bytes()))}
    prefix = f"lib/modules/{RELEASE}/kernel/drivers"
    assert entries[f"{prefix}/block/virtio_blk.ko"] == blk
    assert entries[f"{prefix}/virtio/virtio.ko"] == virtio
    assert f"lib/modules/{RELEASE}/modules.builtin" in entries
    assert not any("unrelated" in name for name in entries)
    init = entries["init"].decode()
    assert init.index("virtio/virtio.ko") < init.index("virtio/virtio_pci.ko") and LOG_PREFIX in init
    # Cached by content: the same kernel gives the same file.
    assert build_root_initramfs(kernel, RELEASE).path == root.path


def test_a_kernel_without_the_disk_driver_is_refused_in_one_line(tmp_path: Path) -> None:
    kernel = _kernel_tree(tmp_path, {"kernel/drivers/virtio/virtio_pci.ko": _modinfo("")})
    with pytest.raises(InputError) as caught:
        build_root_initramfs(kernel, RELEASE)
    assert "no virtio_blk module and no built-in virtio_blk driver" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_run_image_with_a_kernel_lacking_the_disk_driver_exits_2(
    default_image: object, cloud_kernel: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The real pinned bzImage (its release is not the image's), beside a modules tree without virtio.
    kernel = _kernel_tree(tmp_path, {}, builtin=())
    release = kernel.name.removeprefix("vmlinuz-")
    real_release = read_image_release(cloud_kernel)
    assert real_release is not None and real_release != release
    target = kernel.with_name(f"vmlinuz-{real_release}")
    shutil.copyfile(cloud_kernel, target)
    (tmp_path / "lib" / "modules" / release).rename(tmp_path / "lib" / "modules" / real_release)
    db = tmp_path / "x.db"
    code = run_in_process(
        "run", str(target), "--image", TEST_IMAGE, "-n", "1", "--accel", "tcg", "--db", str(db)
    )
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and "no virtio_pci module" in err and real_release in err


def test_the_load_order_agrees_with_depmod_on_the_real_kernel(cloud_kernel: Path) -> None:
    # The pinned Debian kernel's own modules: the order read from each module's depends= field puts
    # every dependency that depmod (run by the build on the shipped modules) names before its user.
    release = read_image_release(cloud_kernel)
    assert release is not None
    root = build_root_initramfs(cloud_kernel, release)
    names = [m.name for m in root.modules]
    assert "virtio_blk" in names or "virtio_blk" in root.builtin
    assert root.modules_dir is not None and "qemu_fw_cfg" in {m.name for m in root.for_root}
    entries = {name: data for name, _mode, data in read_newc(gzip.decompress(root.path.read_bytes()))}
    dep = entries[f"lib/modules/{release}/modules.dep"].decode()
    assert f"lib/modules/{release}/modules.dep.bin" in entries
    needs = {
        module_name(Path(head).name): [module_name(Path(d).name) for d in tail.split()]
        for head, _, tail in (line.partition(":") for line in dep.splitlines())
    }
    assert set(names) <= set(needs)
    for name in names:
        for dependency in needs[name]:
            assert names.index(dependency) < names.index(name), (dependency, name)

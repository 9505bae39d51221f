"""Image recipes (cache keys, sizes, kernel packages, names) and build failures that need no mirror;
the guest files bootscope writes into a Debian tree."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from bootscope.errors import BootError, InputError
from bootscope.lab.qemu import image as image_module
from bootscope.lab.qemu.image import (
    ImageRecipe,
    build_image,
    find_image,
    kernel_package,
    make_recipe,
    parse_size,
)
from bootscope.lab.qemu.image_guest import COLLECTOR_UNIT, write_guest_files


def test_the_key_changes_with_everything_that_changes_the_image() -> None:
    base = ImageRecipe()
    keys = {
        base.key(),
        replace(base, suite="trixie").key(),
        replace(base, packages=("openssh-server",)).key(),
        replace(base, ssh_key="ssh-ed25519 AAAA x").key(),
        replace(base, size_bytes=3 << 30).key(),
        replace(base, kernel_package="linux-image-amd64").key(),
    }
    assert len(keys) == 6
    assert replace(base, packages=("b", "a")).key() == replace(base, packages=("a", "b", "a")).key()


def test_sizes_kernels_and_recipes() -> None:
    assert parse_size("2G") == 2 << 30 and parse_size("1536M") == 1536 << 20 and parse_size("2GiB") == 2 << 30
    for bad in ("2 gallons", "", "100M"):
        with pytest.raises(InputError):
            parse_size(bad)
    assert kernel_package("debian:cloud") == "linux-image-cloud-amd64"
    assert kernel_package("debian:linux-image-6.1.0-50-amd64") == "linux-image-6.1.0-50-amd64"
    with pytest.raises(InputError, match="debian:cloud"):
        kernel_package("/boot/vmlinuz")
    with pytest.raises(InputError, match="package name"):
        make_recipe(
            suite="bookworm", packages=("Bad Name",), ssh_key_file=None, size="2G", kernel="debian:cloud"
        )


def test_ssh_key_must_be_one_public_key(tmp_path: Path) -> None:
    good = tmp_path / "id.pub"
    good.write_text("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG user@host\n")
    recipe = make_recipe(suite="bookworm", packages=(), ssh_key_file=good, size="2G", kernel="debian:cloud")
    assert recipe.ssh_key == "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG user@host"
    private = tmp_path / "id"
    private.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n")
    with pytest.raises(InputError, match="public key"):
        make_recipe(suite="bookworm", packages=(), ssh_key_file=private, size="2G", kernel="debian:cloud")


def test_build_without_root_is_one_clear_error_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(image_module.os, "geteuid", lambda: 1000)
    with pytest.raises(BootError, match="needs root"):
        build_image("x", ImageRecipe())
    store = tmp_path / "bootscope" / "images" / "store"
    assert [p.name for p in store.iterdir() if not p.name.endswith(".lock")] == []
    with pytest.raises(InputError, match="no image called 'x'"):
        find_image("x")
    with pytest.raises(InputError, match="bad image name"):
        build_image("../etc", ImageRecipe())


def test_guest_files(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    write_guest_files(tmp_path, "ssh-ed25519 AAAA k")
    # The root by its label, which a virtio disk (/dev/vda) and an NVDIMM (/dev/pmem0) both carry.
    assert (tmp_path / "etc/fstab").read_text() == "LABEL=bootscope-root / ext4 rw,errors=remount-ro 0 0\n"
    # The initramfs gets the NVDIMM's bus driver and block driver (listed once each, after any of Debian's).
    modules = (tmp_path / "etc/initramfs-tools/modules").read_text().split("\n")
    assert modules.count("nfit") == 1 and modules.count("nd_pmem") == 1
    getty = tmp_path / "etc/systemd/system/getty.target.wants/serial-getty@ttyS0.service"
    assert os.readlink(getty) == "/lib/systemd/system/serial-getty@.service"
    unit = (tmp_path / "etc/systemd/system" / COLLECTOR_UNIT).read_text()
    assert "Type=simple" in unit and "After=multi-user.target" in unit
    assert (tmp_path / "etc/systemd/system/multi-user.target.wants" / COLLECTOR_UNIT).is_symlink()
    script = (tmp_path / "usr/local/sbin/bootscope-collect").read_text()
    assert "systemctl is-system-running --wait" in script and "systemd-analyze critical-chain" in script
    assert (tmp_path / "root/.ssh/authorized_keys").stat().st_mode & 0o777 == 0o600

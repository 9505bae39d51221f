"""Kernels: a bzImage path, a Debian package fetched once into the cache, and `bootscope kernels`."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
import typer
from kernel_pin import PINNED_PACKAGE, offline
from typer.testing import CliRunner

import bootscope.lab.qemu.kernels as kernels
from bootscope.cli import kernels_cmd
from bootscope.errors import BootError, InputError


def test_resolve_a_path_reads_the_release_from_the_header(cloud_kernel: Path) -> None:
    image = kernels.resolve_kernel(str(cloud_kernel))
    assert image.image == cloud_kernel.resolve() and image.package is None and image.initrd is None
    # Debian names the file vmlinuz-<release>: an independent source for the header's version string.
    assert image.release == cloud_kernel.name.removeprefix("vmlinuz-")


def test_a_file_that_is_not_a_kernel_is_refused(tmp_path: Path) -> None:
    junk = tmp_path / "junk"
    junk.write_bytes(b"\x7fELF" + b"\0" * 2000)
    with pytest.raises(BootError, match="not a kernel image"):
        kernels.resolve_kernel(str(junk))
    tiny = tmp_path / "tiny"
    tiny.write_bytes(b"HdrS")
    with pytest.raises(BootError, match="not a kernel image"):
        kernels.resolve_kernel(str(tiny))
    with pytest.raises(BootError, match="no such kernel"):
        kernels.resolve_kernel(str(tmp_path / "absent"))


def test_bad_debian_specs() -> None:
    for spec in ("debian:", "debian:foo", "debian:linux-image-x;rm"):
        with pytest.raises(InputError):
            kernels.resolve_kernel(spec)


def test_cached_debian_kernel_needs_no_apt(cloud_kernel: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_apt(*args: object, **kwargs: object) -> str:
        raise AssertionError(f"apt was called for a cached kernel: {args}")

    warm = kernels.resolve_kernel("debian:cloud")  # the first resolve may ask apt (not offline)
    monkeypatch.setattr(kernels, "_run", no_apt)
    cloud = kernels.resolve_kernel("debian:cloud")
    assert cloud.image == warm.image and cloud.spec == "debian:cloud"
    assert kernels.resolve_kernel(f"debian:{PINNED_PACKAGE}").image == cloud_kernel
    assert cloud.package is not None and cloud.release is not None
    assert cloud.package == f"linux-image-{cloud.release}"
    exact = kernels.resolve_kernel(f"debian:{cloud.package}")
    assert exact.image == cloud.image and exact.release == kernels.read_image_release(cloud.image)
    listing = kernels.list_kernels(offered=False)
    assert cloud.package in [entry.package for entry in listing.cached]
    entry = next(entry for entry in listing.cached if entry.package == cloud.package)
    assert entry.size_bytes == cloud.image.stat().st_size


def test_depends_parsing() -> None:
    record = "Package: linux-image-cloud-amd64\nDepends: linux-image-6.1.0-56-cloud-amd64 (= 6.1.192-2)\n"
    assert kernels._depends_kernel(record) == "linux-image-6.1.0-56-cloud-amd64"
    assert kernels._depends_kernel("Depends: libc6 (>= 2), linux-image-6.12.1+deb12-rt-amd64\n") == (
        "linux-image-6.12.1+deb12-rt-amd64"
    )
    assert kernels._depends_kernel("Package: x\n") is None


@pytest.mark.skipif(shutil.which("apt-get") is None, reason="needs apt")
@pytest.mark.skipif(offline(), reason="BOOTSCOPE_OFFLINE=1: downloads with apt")
def test_parallel_fetches_share_one_download(
    cloud_kernel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    package = f"linux-image-{kernels.read_image_release(cloud_kernel)}"
    downloads: list[list[str]] = []
    real_run = kernels._run

    def counting_run(argv: list[str], cwd: Path, what: str) -> str:
        if argv[:2] == ["apt-get", "download"]:
            downloads.append(argv)
        return real_run(argv, cwd, what)

    monkeypatch.setattr(kernels, "_run", counting_run)
    results: list[kernels.KernelImage] = []
    threads = [
        threading.Thread(target=lambda: results.append(kernels.resolve_kernel(f"debian:{package}")))
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 3 and len({result.image for result in results}) == 1
    assert len(downloads) == 1
    image = results[0].image
    assert str(image).startswith(str(tmp_path)) and image.read_bytes() == cloud_kernel.read_bytes()
    assert not list(image.parents[2].glob("*.deb"))  # the .deb is removed after unpacking
    with pytest.raises(BootError, match="cannot download"):
        kernels.resolve_kernel("debian:linux-image-0.0.0-no-such-flavour")


def test_cli_lists_the_cached_kernel(cloud_kernel: Path) -> None:
    app = typer.Typer()
    app.command("kernels")(kernels_cmd.kernels)
    app.command("unused")(lambda: None)  # two commands: typer then expects the command name
    result = CliRunner().invoke(app, ["kernels"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert cloud_kernel.name.removeprefix("vmlinuz-") in result.output
    assert "MiB" in result.output

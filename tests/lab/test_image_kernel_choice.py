"""Which initramfs an image variant boots: the image's own for its release, bootscope's root initramfs
for any other kernel, said in the run's notes; and how its disk is attached: an NVDIMM under --icount
where the initramfs can find the root on one, else virtio, said in the notes (fast: a fake target,
nothing boots)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from bootscope.errors import InputError
from bootscope.lab.plans.boot import build_plan
from bootscope.lab.plans.settings import GivenSettings
from bootscope.lab.qemu.image import Image, ImageRecipe
from bootscope.lab.qemu.kernels import KernelImage
from bootscope.lab.qemu.root_initramfs import RootInitramfs, RootModule
from bootscope.lab.targets.fake import FAKE_RELEASE, FakeTarget
from bootscope.lab.workloads.boot import BootWorkload


@dataclass(slots=True)
class ImageTarget(FakeTarget):
    """The fake target with one image, whose kernel release is ``image_release``."""

    image_release: str = FAKE_RELEASE
    refuse: bool = False
    recipe_version: int = 5

    def resolve_image(self, name: str) -> Image:
        root = Path("/fake/images") / name
        return Image(
            name,
            "k",
            root / "disk.img",
            root / "vmlinuz",
            root / "initrd.img",
            self.image_release,
            ImageRecipe(),
            1.0,
            "now",
            self.recipe_version,
        )

    def build_root_initramfs(self, kernel: KernelImage) -> RootInitramfs:
        if self.refuse:
            raise InputError(
                f"kernel {kernel.release}: no virtio_blk module and no built-in virtio_blk driver"
            )
        module = RootModule("virtio_blk", Path("/m/virtio_blk.ko"), "kernel/drivers/block/virtio_blk.ko")
        return RootInitramfs(
            Path("/fake/root.cpio"), kernel.release or "", (module,), (), ("ext4",), Path("/m")
        )


def _workload(*variants: str, icount: bool = False) -> BootWorkload:
    plan = build_plan(
        kernel=None,
        base_options=[("image", "img"), *([("icount", 3)] if icount else [])],
        variant_texts=list(variants),
        plan_file=None,
        settings=GivenSettings(seed=1),
    )
    return BootWorkload(plan)


def test_the_images_release_boots_the_images_own_initramfs() -> None:
    workload = _workload("own:kernel=k1")
    assert workload.prepare(ImageTarget(), "tcg") == []
    assert workload.configs["own"].initrd == Path("/fake/images/img/initrd.img")
    assert workload.releases["own"] == FAKE_RELEASE and not workload.notes


def test_another_release_boots_bootscopes_root_initramfs_and_says_so() -> None:
    workload = _workload("plain:", "other:kernel=k2")
    notes = workload.prepare(ImageTarget(image_release="6.1.0-50-cloud-amd64"), "tcg")
    assert workload.configs["other"].initrd == Path("/fake/root.cpio")
    assert workload.configs["other"].kernel == Path("k2")
    assert workload.configs["plain"].initrd == Path("/fake/images/img/initrd.img")
    assert workload.releases["other"] == FAKE_RELEASE
    note = workload.notes["other"]
    assert "via bootscope's initramfs" in note and "6.1.0-50-cloud-amd64" in note and "virtio_blk" in note
    assert any(text.startswith("variant other: kernel") for text in notes)
    # One variant with the image's initramfs and one with bootscope's: initrd_s is not comparable.
    assert any("initrd_s" in text and "plain" in text and "other" in text for text in notes)


def test_a_kernel_without_the_disk_driver_names_the_variant() -> None:
    workload = _workload("other:kernel=k2")
    with pytest.raises(InputError, match=r"^variant other: kernel .*no virtio_blk module"):
        workload.prepare(ImageTarget(image_release="6.1.0-50-cloud-amd64", refuse=True), "tcg")


def _root(workload: BootWorkload, name: str) -> str:
    return next(word for word in workload.configs[name].append.split() if word.startswith("root="))


def test_under_icount_the_image_disk_is_an_nvdimm_and_the_root_its_pmem_device() -> None:
    workload = _workload("a:", "b:append=quiet", icount=True)
    assert workload.prepare(ImageTarget(), "tcg") == []
    for name in ("a", "b"):
        assert workload.configs[name].disk_attach == "nvdimm"
        assert _root(workload, name) == "root=/dev/pmem0"
    assert not workload.disk_notes


def test_without_icount_or_when_asked_the_disk_stays_on_virtio() -> None:
    plain = _workload("a:")
    plain.prepare(ImageTarget(), "tcg")
    assert plain.configs["a"].disk_attach == "virtio" and _root(plain, "a") == "root=/dev/vda"
    asked = _workload("a:disk-attach=virtio", icount=True)
    assert asked.prepare(ImageTarget(), "tcg") == []
    assert asked.configs["a"].disk_attach == "virtio" and _root(asked, "a") == "root=/dev/vda"


def test_an_image_of_an_older_recipe_stays_on_virtio_and_the_notes_say_why() -> None:
    workload = _workload("a:", icount=True)
    notes = workload.prepare(ImageTarget(recipe_version=4), "tcg")
    assert workload.configs["a"].disk_attach == "virtio"
    (note,) = notes
    assert note.startswith("variant a: the disk stays on virtio") and "bootscope image build" in note
    assert "warp" in note
    with pytest.raises(InputError, match=r"^variant a: disk-attach=nvdimm: image img was built before"):
        _workload("a:disk-attach=nvdimm", icount=True).prepare(ImageTarget(recipe_version=4), "tcg")


def test_a_foreign_kernel_keeps_virtio_and_mixed_attaches_are_named() -> None:
    workload = _workload("own:", "other:kernel=k2", icount=True)
    notes = workload.prepare(ImageTarget(image_release="6.1.0-50-cloud-amd64"), "tcg")
    assert workload.configs["own"].disk_attach == "nvdimm"
    assert workload.configs["other"].disk_attach == "virtio"
    assert "virtio only" in workload.disk_notes["other"]
    assert any(text.startswith("the variants attach their disks differently") for text in notes)
    assert any("own nvdimm" in text and "other virtio" in text for text in notes)
    with pytest.raises(InputError, match=r"^variant other: disk-attach=nvdimm: bootscope's initramfs"):
        _workload("other:kernel=k2,disk-attach=nvdimm", icount=True).prepare(
            ImageTarget(image_release="6.1.0-50-cloud-amd64"), "tcg"
        )


def test_disk_attach_takes_only_its_two_values() -> None:
    with pytest.raises(InputError, match=r"option disk-attach: 'ram' is not one of virtio, nvdimm"):
        _workload("a:disk-attach=ram")

"""``bootscope image build NAME`` and ``bootscope image list``: bootable Debian system images."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from bootscope import defaults
from bootscope.cli.console import error_console, output_console

app = typer.Typer(
    name="image",
    help="Build and list bootable Debian system images (systemd, a serial getty) for run --image.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)


@app.command("build")
def build(
    name: Annotated[str, typer.Argument(help="The image's name (what run --image and image=NAME use).")],
    suite: Annotated[str, typer.Option("--suite", help="Debian suite.")] = defaults.IMAGE_SUITE,
    packages: Annotated[
        str | None,
        typer.Option(
            "--packages", help="Extra Debian packages, comma-separated (openssh-server,kexec-tools)."
        ),
    ] = None,
    ssh_key: Annotated[
        Path | None, typer.Option("--ssh-key", help="An OpenSSH public key (KEY.pub) for root.")
    ] = None,
    size: Annotated[str, typer.Option("--size", help="The root file system's size.")] = defaults.IMAGE_SIZE,
    kernel: Annotated[
        str,
        typer.Option("--kernel", help="Kernel package: debian:cloud|amd64|rt or debian:linux-image-<...>."),
    ] = defaults.IMAGE_KERNEL,
    mirror: Annotated[str, typer.Option("--mirror", help="Debian mirror.")] = defaults.DEBIAN_MIRROR,
    rebuild: Annotated[bool, typer.Option("--rebuild", help="Build again even if cached.")] = False,
) -> None:
    """Build (or find in the cache) a bootable Debian image with debootstrap; needs root."""
    from bootscope.sources.image import build_image, make_recipe

    err = error_console()
    recipe = make_recipe(
        suite=suite,
        packages=tuple(p.strip() for p in (packages or "").split(",") if p.strip()),
        ssh_key_file=ssh_key,
        size=size,
        kernel=kernel,
    )
    image, cached = build_image(
        name, recipe, mirror=mirror, rebuild=rebuild, progress=lambda text: err.print(escape(text))
    )
    how = (
        f"cached (built in {image.build_s:.1f} s at {image.built_at})"
        if cached
        else f"built in {image.build_s:.1f} s"
    )
    output_console().print(
        f"image {escape(name)}: {escape(str(image.disk))}"
        f" ({image.recipe.suite}, kernel {escape(image.release)}, {how})"
    )


@app.command("list")
def list_() -> None:
    """List the named images in the user's cache."""
    from bootscope.sources.image import images_dir, list_images

    out = output_console()
    images = list_images()
    if not images:
        out.print("no images (build one with: bootscope image build NAME)")
        return
    table = Table(title=f"images in {escape(str(images_dir()))}", title_justify="left")
    for column in ("name", "key", "suite", "kernel", "packages", "size", "build", "disk"):
        table.add_column(column, overflow="fold")
    for image in images:
        table.add_row(
            escape(image.name or "-"),
            image.key,
            escape(image.recipe.suite),
            escape(image.release),
            escape(",".join(image.recipe.packages) or "-"),
            f"{image.recipe.size_bytes >> 20} MiB",
            f"{image.build_s:.0f} s",
            escape(str(image.disk)),
        )
    out.print(table)

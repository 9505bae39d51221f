"""``bootscope image build NAME`` and ``bootscope image list``: bootable Debian system images."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from bootscope import defaults
from bootscope.report.console import error_console, output_console

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
    from bootscope.lab.qemu.image import build_image, make_recipe

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
    from bootscope.lab.qemu.image import images_dir, list_images
    from bootscope.report.image_out import images_table

    out = output_console()
    images = list_images()
    if not images:
        out.print("no images (build one with: bootscope image build NAME)")
        return
    out.print(images_table(images, images_dir()))


@app.command("serve")
def serve(
    name: Annotated[str, typer.Argument(help="The image to serve (built with openssh-server).")],
    ssh_port: Annotated[
        int, typer.Option("--ssh-port", help="Host port on 127.0.0.1 forwarded to the guest's SSH port.")
    ],
    console_socket: Annotated[
        Path | None,
        typer.Option(
            "--console-socket", help="UNIX socket for the serial console (socat - UNIX-CONNECT:PATH)."
        ),
    ] = None,
    mem: Annotated[int, typer.Option("--mem", help="Guest memory in MiB.")] = 1024,
    smp: Annotated[int, typer.Option("--smp", help="vCPUs.")] = 1,
    accel: Annotated[str, typer.Option("--accel", help="tcg or kvm.")] = "tcg",
    append: Annotated[str, typer.Option("--append", help="Kernel command line to add.")] = "",
    known_hosts: Annotated[
        Path | None,
        typer.Option(
            "--known-hosts", help="Write the image's SSH host keys (read from its disk) to this file."
        ),
    ] = None,
) -> None:
    """Boot an image in QEMU as a long-lived machine that reboots like hardware, SSH on 127.0.0.1:PORT,
    until Ctrl-C or SIGTERM (exit 0); 3 if QEMU fails."""
    import signal
    import threading

    from bootscope.lab.qemu.image import find_image
    from bootscope.lab.qemu.serve import ServeConfig, known_hosts_lines
    from bootscope.lab.qemu.serve import serve as serve_image

    out = output_console()
    err = error_console()
    image = find_image(name)
    if "openssh-server" not in image.recipe.packages:
        err.print(
            f"note: image {escape(name)} has no openssh-server: nothing will answer on port {ssh_port}"
            " (build it with --packages openssh-server,kexec-tools --ssh-key KEY.pub)"
        )
    config = ServeConfig(
        ssh_port=ssh_port,
        console_socket=console_socket.expanduser().resolve() if console_socket else None,
        mem_mb=mem,
        smp=smp,
        accel=accel,
        append=append,
    )
    if known_hosts is not None:
        known_hosts.write_text("\n".join(known_hosts_lines(image, ssh_port)) + "\n")
        err.print(f"host keys of {escape(name)} written to {escape(str(known_hosts))}")
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        stop.set()

    def on_started(pid: int, _argv: list[str]) -> None:
        console = f", console: socat - UNIX-CONNECT:{config.console_socket}" if config.console_socket else ""
        out.print(
            f"serving image {escape(name)} (QEMU pid {pid}, {accel}): ssh -p {ssh_port} root@127.0.0.1"
            f"{escape(console)}; it reboots like hardware and stays up until Ctrl-C or SIGTERM",
            soft_wrap=True,
        )

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        how = serve_image(image, config, on_started, stop.is_set)
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
    out.print(f"image {escape(name)}: {how}; QEMU stopped")

#!/usr/bin/env bash
# Installs everything bootscope needs on a fresh Debian machine: the Debian packages (QEMU, busybox,
# kexec-tools, rt-tests, debootstrap for system images, Chromium for the browser tests, PostgreSQL for
# the store tests, qemu-img for disk images, pgrep and git used by tests, the ssh client and socat for
# the SSH target and its serial console, gcc and the Python headers for the C part of the log scan,
# libvirt's daemon with its QEMU driver for libvirt: domains, and libvirt-dev with pkg-config to build
# libvirt's Python binding)
# and a virtualenv
# in .venv with the package and its development tools. Safe to run again: it skips what is there.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(python3 python3-venv python3-pip qemu-system-x86 busybox-static kexec-tools rt-tests rtla stress-ng cpio
  debootstrap zstd xz-utils chromium fonts-dejavu-core postgresql e2fsprogs qemu-utils procps git
  openssh-client socat kmod iproute2 gcc libc6-dev python3-dev
  libvirt-daemon-system libvirt-daemon-driver-qemu libvirt-dev pkg-config)
need_apt=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$pkg")
done
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
# bootscope fetches Debian kernels with apt-get download: it needs package lists even when every
# package above is already installed.
if [ ${#need_apt[@]} -gt 0 ] || ! compgen -G "/var/lib/apt/lists/*_Packages*" > /dev/null; then
  $SUDO apt-get update -q
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing Debian packages: ${need_apt[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${need_apt[@]}"
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.bootscope-installed
# (setup.py builds the block scan's C part: a change to it or to its source needs a new install)
want=$(cat pyproject.toml setup.py bootscope/parse/_scan.c | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -e '.[dev]'
  echo "$want" > "$stamp"
fi
# Byte-compile the package: an editable install leaves that to the first import, and where
# PYTHONDONTWRITEBYTECODE is set (or the checkout is read-only) every `bootscope` start-up would
# compile its modules from source again (about 50 ms of each `bootscope analyze`). Stale files are
# harmless: Python checks each one against its source's mtime.
.venv/bin/python -m compileall -q -j 0 bootscope > /dev/null

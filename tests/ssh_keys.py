"""The SSH key of the test image: made once with ssh-keygen under the user's cache."""

from __future__ import annotations

import subprocess
from pathlib import Path


def ssh_test_key() -> Path:
    """Return the private key whose public half (``.pub`` beside it) the test image authorizes for
    root; the image's cache key holds the public key, so a new key means a new image."""
    from bootscope import defaults

    key = defaults.cache_dir() / "test-ssh" / "id_ed25519"
    if not key.is_file() or not key.with_suffix(".pub").is_file():
        key.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        for stale in (key, key.with_suffix(".pub")):
            stale.unlink(missing_ok=True)
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "bootscope-test", "-f", str(key)],
            check=True,
            capture_output=True,
        )
    return key

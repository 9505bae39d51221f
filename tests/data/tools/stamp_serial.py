"""Stamp each line of a command's output with host times, as grabserial -t does: "[since_start delta] line".

Used once to produce tests/data/debian-6.1-cloud-smp2-grabserial.log:
  python3 tests/data/tools/stamp_serial.py qemu-system-x86_64 -accel tcg ... > out.log
"""

import subprocess
import sys
import time

start = time.monotonic()
previous = start
with subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE) as proc:
    assert proc.stdout is not None
    for raw in proc.stdout:
        now = time.monotonic()
        line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        sys.stdout.write(f"[{now - start:.6f} {now - previous:.6f}] {line}\n")
        previous = now

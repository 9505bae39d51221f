"""Rewrite a bootscope console capture (``host_ns<TAB>serial line`` rows after a ``# host_start_ns=N``
header) in grabserial's ``-t`` form: ``[since_start delta] line``, seconds with 6 decimals, the start
being QEMU's start (the header), as grabserial counts from the moment it opened the port.

Used once to produce tests/data/kexec-chain-2hops-nochecks-grabserial.log:
  python3 tests/data/tools/tsv_to_grabserial.py tests/data/kexec-chain-2hops-nochecks.tsv > out.log
"""

import re
import sys

with open(sys.argv[1], encoding="utf-8") as capture:
    header = capture.readline()
    found = re.search(r"host_start_ns=(\d+)", header)
    if found is None:
        sys.exit("no '# host_start_ns=N' header")
    start_ns = previous_ns = int(found.group(1))
    for row in capture:
        stamp, _, line = row.rstrip("\n").partition("\t")
        now_ns = int(stamp)
        sys.stdout.write(f"[{(now_ns - start_ns) / 1e9:.6f} {(now_ns - previous_ns) / 1e9:.6f}] {line}\n")
        previous_ns = now_ns

"""Convert a real /dev/kmsg capture of a guest into the two journalctl output forms bootscope reads.

journalctl is not run on the development machine's journal (that would describe this machine, not
a kernel under test); instead the guest's kmsg records are written the way journalctl prints kernel
records: ``-o short-monotonic`` ("[    1.234567] guest kernel: text") and ``-o json`` (one object a
line, ``__MONOTONIC_TIMESTAMP`` in microseconds as a string, ``_TRANSPORT`` "kernel"). The JSON form
holds the capture twice under two ``_BOOT_ID`` values (a journal over two boots), and the record
holding "hello from userspace" has its MESSAGE as an array of bytes, as journald stores
non-UTF-8 text.

  python3 tests/data/tools/kmsg_to_journal.py tests/data/debian-6.1-cloud-smp2-kmsg.log tests/data
"""

import json
import re
import sys
from pathlib import Path

RECORD = re.compile(r"(\d+),(\d+),(\d+),[^;]*;(.*)")


def main() -> None:
    source, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    records = []
    for line in source.read_text().splitlines():
        m = RECORD.match(line)
        if m:
            prefix, seq, usec = int(m[1]), int(m[2]), int(m[3])
            # journald stores the text unescaped (kmsg escapes newlines and other bytes as \xNN)
            text = re.sub(r"\\x([0-9a-f]{2})", lambda e: chr(int(e[1], 16)), m[4])
            records.append((prefix, seq, usec, text))
    short = ["-- Journal begins at a test capture. --"]
    for _prefix, _seq, usec, text in records:
        for part in text.split("\n"):  # journalctl prints a multi-line message as several lines
            short.append(f"[{usec // 1_000_000:5d}.{usec % 1_000_000:06d}] guest kernel: {part}")
    (out_dir / "debian-6.1-cloud-smp2-journal-short-monotonic.log").write_text("\n".join(short) + "\n")
    lines = []
    for boot_id in ("0f1e2d3c4b5a69788796a5b4c3d2e1f0", "a1b2c3d4e5f60718293a4b5c6d7e8f90"):
        for prefix, seq, usec, text in records:
            message: object = text
            if text == "hello from userspace":
                message = list(text.encode())
            record = {
                "__MONOTONIC_TIMESTAMP": str(usec),
                "_BOOT_ID": boot_id,
                "_TRANSPORT": "kernel",
                "SYSLOG_IDENTIFIER": "kernel",
                "PRIORITY": str(prefix & 7),
                "SYSLOG_FACILITY": str(prefix >> 3),
                "SEQNUM": str(seq),
                "MESSAGE": message,
            }
            lines.append(json.dumps(record))
    (out_dir / "debian-6.1-cloud-smp2-journal.json").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# The main job on its defaults: boot a real Debian kernel many times in QEMU (two variants, interleaved,
# 24 boots each), analyze every boot, compare the variants, and write the reports into OUT (default out/).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out}
mkdir -p "$out"
bs=.venv/bin/bootscope
db="$out/demo.db"
$bs kernels --fetch debian:cloud
$bs run debian:cloud --db "$db" \
  --variant smp1:smp=1 --variant smp2:smp=2
$bs compare latest --db "$db" --baseline smp1
$bs compare latest --db "$db" --baseline smp1 --format mail > "$out/compare.txt"
$bs analyze --run latest --boot 1 --db "$db"
$bs report --run latest --db "$db" -o "$out/report.html"
$bs trace --run latest --boot 1 --db "$db" -o "$out/boot.json"
echo "demo: reports in $out/ (report.html, boot.json for ui.perfetto.dev, compare.txt), samples in $db"

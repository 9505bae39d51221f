#!/usr/bin/env bash
# The main job on its defaults: boot a real Debian kernel many times in QEMU (three variants, interleaved,
# 24 boots each after a warm-up), analyze every boot, compare the variants against the first, and write
# the reports into OUT (default out/). smp2 costs the bring-up of a second vCPU; debug prints every
# initcall on the serial console (initcall_debug): a real cost that the comparison should find.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-out}
mkdir -p "$out"
bs=.venv/bin/bootscope
db="$out/demo.db"
$bs kernels --fetch debian:cloud
$bs run debian:cloud --db "$db" \
  --variant smp1:smp=1 --variant smp2:smp=2 --variant "debug:append=initcall_debug ignore_loglevel"
$bs compare latest --db "$db" --baseline smp1
$bs compare latest --db "$db" --baseline smp1 --format mail > "$out/compare.txt"
$bs analyze --run latest --boot 2 --db "$db" --top 5
$bs report --run latest --db "$db" -o "$out/report.html"
$bs trace --run latest --db "$db" -o "$out/boot.json"
echo "demo: reports in $out/ (report.html, boot.json for ui.perfetto.dev, compare.txt), samples in $db"
echo "browse it all (runs, boots, comparisons) as a dashboard on this machine: $bs serve --db $db"

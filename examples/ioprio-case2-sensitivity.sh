#!/usr/bin/env bash
# Seed 001 Case 2: how the content-activity patch's effect on the 8 x 4k
# buffered random readers depends on memory, the device and the scheduler.
# Each row is examples/ioprio-case2-randread.toml with one thing changed, run
# off / iter-bio / add-page; prints a markdown table (docs/fidelity/ioprio.md).
# Usage: examples/ioprio-case2-sensitivity.sh [path/to/blklab]
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-./target/release/blklab}
E=examples/ioprio-case2-randread.toml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

row() { # label sed-program
  sed -e "$2" "$E" >"$tmp/s.toml"
  out=$("$B" compare "$tmp/s.toml" --variant ioprio.content_activity=off,iter-bio,add-page)
  read -r off ib ap chg < <(echo "$out" | grep -E '^ +MiB/s' | head -1 | awk '{print $2, $3, $4, $5}')
  rt=$(echo "$out" | grep 'bios RT' | head -1 | awk '{print $(NF-1)}')
  hit=$(echo "$out" | grep 'read hit' | awk '{print $(NF-3)}')
  echo "| $1 | $off | $ib | $ap | $chg | $rt % | $hit % |"
}

echo "| variant | MiB/s off | iter-bio | add-page | change | read bios RT | hit |"
echo "|---|---|---|---|---|---|---|"
row "the example: 1 GiB cache, 4 units of 10k IOPS, depth 8, mq-deadline" 's/^#//;t'
row "cache 512 MiB" 's/memory = "1G"/memory = "512M"/'
row "cache 1536 MiB" 's/memory = "1G"/memory = "1536M"/'
row "cache 1900 MiB" 's/memory = "1G"/memory = "1900M"/'
row "1 unit (serial device)" 's/parallelism = 4/parallelism = 1/'
row "8 units, depth 16" 's/parallelism = 4/parallelism = 8/; s/queue_depth = 8/queue_depth = 16/'
row "17k IOPS per unit" 's/rrandiops = 10000/rrandiops = 17000/'
row "prio_aging_expire = 10 ms" 's/^\[device.model\]/[device.iosched]\nprio_aging_expire = 10\n[device.model]/'
row "scheduler none" 's/scheduler = "mq-deadline"/scheduler = "none"/'

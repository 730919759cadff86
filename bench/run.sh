#!/usr/bin/env bash
# The performance benchmark: simulated I/Os per wall-clock second, the
# simulated/wall time ratio, and peak memory, for
#   (a) 4k randread QD32 on none + nullb,
#   (b) the same with 100 cgroups (one job each),
#   (c) a long run (>= 50 M I/Os),
# and (c) again at half the length, to show memory does not grow with run length;
# then (a) and (b) with fio's norandommap=1, the block layer without fio's random map.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p blklab
B=./target/release/blklab
$B bench --cases a,b
$B bench --cases c --long-seconds 110
$B bench --cases c --long-seconds 55
$B bench --cases a,b --norandommap

#!/usr/bin/env bash
# The performance benchmark: simulated I/Os per wall-clock second, wall ns per
# simulated I/O, the simulated/wall time ratio, and peak memory, for
#   (a) 4k randread QD32 on none + nullb, followed by the reference loop (a bare
#       BinaryHeap event loop on the same timeline) and the ratio of the two,
#   (a-iocost, a-iomax) case a over 2 cgroups under iocost / a non-binding io.max,
#   (b) the same job in each of 100 cgroups,
#   (scale) case b at 10, 100, 1000 cgroups with none, iocost, io.max (ns per I/O),
#   (c) a long run (>= 50 M I/Os), and again at half the length, to show memory
#       does not grow with run length;
# then (a) and (b) with fio's norandommap=1, the block layer without fio's random map.
# Sizes: --a-seconds, --long-seconds, --scale, --scale-ios.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p blklab
B=./target/release/blklab
$B bench --cases a,a-iocost,a-iomax,b
$B bench --cases scale --norandommap
$B bench --cases c --long-seconds 110
$B bench --cases c --long-seconds 55
$B bench --cases a,b --norandommap

#!/usr/bin/env bash
# Fuzz blklab's parsers with AFL++ through cargo-afl (docs/fuzzing.md).
#
#   fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Builds the instrumented targets, seeds each from examples/ (and
# fuzz/seeds/), runs each target for SECONDS_PER_TARGET (default 60) one
# after another, and prints each target's executions and crashes. Exit
# status: 0 no crash or hang found, 1 a crash or hang was found (the inputs
# are under fuzz/out/TARGET/default/{crashes,hangs}), 2 the fuzzer could not
# run. Set FUZZ_NICE=0 to run at normal priority (default: nice 19).
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-60}"
shift || true
targets=("$@")
[ "${#targets[@]}" -gt 0 ] || targets=(scenario fio_cmdline fio_jobfile kfiles record)
nice_n="${FUZZ_NICE:-19}"

if ! command -v cargo-afl >/dev/null 2>&1; then
  echo "fuzz/run.sh: cargo-afl is not installed (cargo install cargo-afl --locked)" >&2
  exit 2
fi
nice -n "$nice_n" cargo afl build --release --quiet

# Seed corpora from the examples: whole scenarios, their fio job files,
# job_ini texts and command lines, and every cgroup file line.
rm -rf out/seeds && mkdir -p out/seeds/{scenario,fio_cmdline,fio_jobfile,kfiles,record}
for f in ../examples/*.toml; do cp "$f" out/seeds/scenario/; done
for f in ../examples/jobs/*.fio; do cp "$f" out/seeds/fio_jobfile/; done
cp seeds/record.rec out/seeds/record/
python3 - <<'PY'
import glob, os, tomllib
kf = {"io.max": 0, "io.weight": 1, "io.cost.qos": 2, "io.cost.model": 3,
      "io.prio.class": 4, "io.iotrack.lat_thresh": 5}
n = 0
def put(kind, data):
    global n
    n += 1
    with open(f"out/seeds/{kind}/ex{n:03}", "wb") as f:
        f.write(data)
for path in sorted(glob.glob("../examples/*.toml")):
    with open(path, "rb") as f:
        doc = tomllib.load(f)
    for job in doc.get("job", []):
        if "cmdline" in job:
            put("fio_cmdline", job["cmdline"].encode())
        if "job_ini" in job:
            put("fio_jobfile", job["job_ini"].encode())
    for files in doc.get("cgroup", {}).values():
        for name, val in files.items():
            if name not in kf:
                continue
            for line in (val if isinstance(val, list) else val.splitlines()):
                body = line.split(" ", 1)[1] if name in ("io.cost.qos", "io.cost.model") and " " in line else line
                put("kfiles", bytes([kf[name]]) + body.encode())
    for w in doc.get("write", []):
        if w.get("file") in kf:
            put("kfiles", bytes([kf[w["file"]]]) + w["value"].encode())
# the other parsers of the kfiles target: kstrtoint, MAJ:MIN, durations, sizes
for sel, text in [(6, "0x10"), (7, "8:0 riops=1"), (8, "1.5s"), (9, "512G")]:
    put("kfiles", bytes([sel]) + text.encode())
PY

export AFL_SKIP_CPUFREQ=1 AFL_NO_AFFINITY=1 AFL_NO_UI=1 \
  AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_SKIP_CRASHES=1 AFL_QUIET=1
status=0
printf '%-12s %12s %10s %8s %8s\n' target execs "execs/s" crashes hangs
for t in "${targets[@]}"; do
  rm -rf "out/$t"
  # -t: a generous per-input timeout, so that a loaded machine is not a hang
  if ! nice -n "$nice_n" cargo afl fuzz -i "out/seeds/$t" -o "out/$t" -V "$secs" -t 5000 \
      "target/release/$t" >"out/$t.log" 2>&1; then
    echo "fuzz/run.sh: afl-fuzz failed for $t (see fuzz/out/$t.log)" >&2
    tail -5 "out/$t.log" >&2
    exit 2
  fi
  st="out/$t/default/fuzzer_stats"
  get() { awk -v k="$1" '$1 == k { print $3 }' "$st"; }
  crashes=$(get saved_crashes); hangs=$(get saved_hangs)
  printf '%-12s %12s %10s %8s %8s\n' "$t" "$(get execs_done)" "$(get execs_per_sec)" "$crashes" "$hangs"
  if [ "${crashes:-0}" != 0 ] || [ "${hangs:-0}" != 0 ]; then status=1; fi
done
exit "$status"

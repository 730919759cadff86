//! The guest's shell side: `/init` (mounts, modules, the case loop), the
//! case runner it sources (time limit, output framing onto the results
//! port), and a helper library for case scripts.
//!
//! All of it runs under busybox sh. Debian's busybox-static runs its own
//! applets before searching PATH (a "standalone shell"), so util-linux's
//! losetup must be called by its full path: busybox's applet has no
//! --direct-io.

use crate::error::{Result, VmError};
use crate::protocol::CaseSpec;

/// Where the guest finds the blklab files.
pub const ROOT: &str = "/blklab";
/// The serial port results leave through (QEMU's second `-serial`).
pub const RESULTS_TTY: &str = "/dev/ttyS1";

/// `/init`. It only fails hard when the results port cannot be opened (the
/// shell exits, the kernel panics, QEMU stops: the host sees no READY).
pub const INIT: &str = r#"#!/bin/sh
# /init of a blklab-vm guest. Prepares the kernel for cgroup-v2 I/O cases,
# runs each case in /blklab/cases.list under its time limit, frames its
# output onto the results port (ttyS1) and powers off.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
log() { echo "blklab-init: $*"; }

mount -t devtmpfs devtmpfs /dev
mount -t proc proc /proc
mount -t sysfs sysfs /sys
exec 3>/dev/ttyS1
# No output processing: frames are sent as written.
stty -F /dev/ttyS1 raw -echo 2>/dev/null
echo "BLKLAB-HELLO v1" >&3

step() {
    if _o=$("$@" 2>&1); then
        :
    else
        _m=$(echo "$*: $_o" | tr '\n' ' ')
        log "setup step failed: $_m"
        echo "BLKLAB-SETUP-ERROR $_m" >&3
    fi
}
write_file() { echo "$2" > "$1"; }

step mount -t tmpfs -o mode=1777 tmpfs /tmp
mkdir -p /dev/shm
step mount -t tmpfs tmpfs /dev/shm
for m in $(cat /blklab/modules.order); do
    step insmod "/lib/modules/blklab/$m.ko"
done
step mount -t cgroup2 cgroup2 /sys/fs/cgroup
step write_file /sys/fs/cgroup/cgroup.subtree_control +io
step mount -t tracefs tracefs /sys/kernel/tracing

. /blklab/runner.sh
echo "BLKLAB-READY uptime_ms=$(uptime_ms)" >&3
log "ready"

count=0
while read -r idx name limit <&4; do
    [ -n "$name" ] || continue
    run_case "$idx" "$name" "$limit"
    count=$((count + 1))
done 4</blklab/cases.list
echo "BLKLAB-DONE $count" >&3
# The last close of a tty waits until its output has drained.
exec 3>&-
log "all cases done, powering off"
poweroff -f
"#;

/// The case runner, sourced by /init (and by the host-side test, with
/// `BLKLAB_ROOT` and `BLKLAB_WORK` pointing elsewhere). Writes to fd 3.
pub const RUNNER: &str = r#"# blklab case runner: run_case INDEX NAME LIMIT_SECS.
BLKLAB_ROOT=${BLKLAB_ROOT:-/blklab}
BLKLAB_WORK=${BLKLAB_WORK:-/tmp/blklab}

uptime_ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }

# emit INDEX KIND NAME PATH: one file as a frame (size, base64, end).
emit() {
    _sz=$(wc -c < "$4" | tr -d ' ')
    echo "BLKLAB-FILE $1 $2 $3 $_sz" >&3
    base64 "$4" >&3
    echo "BLKLAB-FILE-END $1 $3" >&3
}

run_case() {
    _i=$1 _n=$2 _lim=$3
    _d=$BLKLAB_WORK/$_n
    mkdir -p "$_d/out" "$_d/tmp"
    echo "BLKLAB-CASE-BEGIN $_i $_n" >&3
    echo "blklab-init: case $_n: begin (limit ${_lim} s)"
    _t0=$(uptime_ms)
    (cd "$_d/tmp" && export BLKLAB_CASE="$_n" BLKLAB_OUT="$_d/out" BLKLAB_TMP="$_d/tmp" &&
        exec sh "$BLKLAB_ROOT/cases/$_n.sh") </dev/null >"$_d/stdout" 2>"$_d/stderr" &
    _pid=$!
    (sleep "$_lim"; touch "$_d/timed-out"; kill -KILL "$_pid") >/dev/null 2>&1 &
    _wd=$!
    wait "$_pid"
    _st=$?
    kill -KILL "$_wd" 2>/dev/null
    _t1=$(uptime_ms)
    # As init, end everything the case started (fio jobs, the watchdog's sleep).
    if [ "$$" -eq 1 ]; then kill -KILL -1 2>/dev/null; fi
    wait 2>/dev/null
    _to=0
    if [ -e "$_d/timed-out" ] && [ "$_st" -eq 137 ]; then _to=1; fi
    emit "$_i" stdout stdout "$_d/stdout"
    emit "$_i" stderr stderr "$_d/stderr"
    for _f in "$_d/out"/*; do
        [ -f "$_f" ] || continue
        _b=${_f##*/}
        case "$_b" in
        *[!A-Za-z0-9._-]*) echo "blklab-init: case $_n: file '$_b' not sent (name)"; continue ;;
        esac
        emit "$_i" file "$_b" "$_f"
    done
    echo "BLKLAB-CASE-END $_i $_n status=$_st timed_out=$_to elapsed_ms=$((_t1 - _t0))" >&3
    echo "blklab-init: case $_n: status $_st, timed out $_to"
    rm -rf "$_d"
}
"#;

/// Helpers for case scripts: `. /blklab/lib.sh`.
pub const LIB_SH: &str = r#"# blklab case helpers. Case scripts run with BLKLAB_CASE (their name),
# BLKLAB_OUT (files left here are sent to the host, names [A-Za-z0-9._-])
# and BLKLAB_TMP (their working directory, on tmpfs).
LOSETUP=/usr/sbin/losetup   # util-linux's (busybox's lacks --direct-io)
FIO=/usr/bin/fio

# blk_attach FILE on|off: losetup -f --show. When direct I/O is refused
# (6.1's tmpfs has no O_DIRECT, and util-linux 2.38 then fails the whole
# LOOP_CONFIGURE with EINVAL) the file is attached buffered; blk_dio says so.
blk_attach() {
    $LOSETUP -f --show --direct-io="$2" "$1" 2>"$BLKLAB_TMP/.losetup.err" && return 0
    [ "$2" = on ] || { cat "$BLKLAB_TMP/.losetup.err" >&2; return 1; }
    echo "blk_attach: direct I/O refused for $1 ($(cat "$BLKLAB_TMP/.losetup.err")); attaching buffered" >&2
    $LOSETUP -f --show "$1"
}
# blk_loop FILE [on|off]: attach FILE (direct I/O on by default), print the
# device. Device numbers blk-iocost already has state for are skipped: the
# kernel keeps a device's iocost configuration after it is detached.
blk_loop() {
    for _try in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
        _dev=$(blk_attach "$1" "${2:-on}") || return 1
        _no=$(cat "/sys/block/${_dev#/dev/}/dev")
        if ! grep -qs "^$_no " /sys/fs/cgroup/io.cost.qos /sys/fs/cgroup/io.cost.model; then
            echo "$_dev"
            return 0
        fi
    done
    return 1
}
# blk_devno DEV: MAJ:MIN.
blk_devno() { cat "/sys/block/${1#/dev/}/dev"; }
# blk_dio DEV: 1 when the loop device does direct I/O to its file.
blk_dio() { cat "/sys/block/${1#/dev/}/loop/dio"; }
# blk_in_cgroup DIR CMD...: run CMD in cgroup DIR (the new shell joins, then execs).
blk_in_cgroup() { sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$@"; }
# fio's start-up (loading its ~60 shared libraries) costs emulated CPU time,
# that is virtual time: fio processes started one after another would begin
# their I/O up to a second apart. A job given "$(blk_barrier_opt NAME)" waits
# before its I/O until blk_barrier_release N sees N jobs waiting.
blk_barrier_opt() { echo "--exec_prerun=sh /blklab/barrier.sh $1"; }
blk_barrier_release() {
    while [ "$(ls "$BLKLAB_TMP/barrier" 2>/dev/null | grep -c '^ready\.')" -lt "$1" ]; do
        usleep 1000
    done
    touch "$BLKLAB_TMP/barrier/go"
}
"#;

/// Run by fio's exec_prerun: announce, then wait for the release.
pub const BARRIER_SH: &str = r#"mkdir -p "$BLKLAB_TMP/barrier"
touch "$BLKLAB_TMP/barrier/ready.$1"
while [ ! -e "$BLKLAB_TMP/barrier/go" ]; do usleep 1000; done
"#;

/// Longest case name.
pub const MAX_NAME_BYTES: usize = 64;

/// Check names (unique, `[A-Za-z0-9._-]`, not starting with '.') and limits.
pub fn validate(cases: &[CaseSpec]) -> Result<()> {
    let mut seen = std::collections::BTreeSet::new();
    for c in cases {
        let ok = !c.name.is_empty()
            && c.name.len() <= MAX_NAME_BYTES
            && !c.name.starts_with('.')
            && c.name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-');
        if !ok {
            return Err(VmError::BadCase(format!(
                "case name '{}' must be 1-{MAX_NAME_BYTES} characters of [A-Za-z0-9._-], not starting with '.'",
                c.name
            )));
        }
        if !seen.insert(c.name.as_str()) {
            return Err(VmError::BadCase(format!(
                "case name '{}' is used twice",
                c.name
            )));
        }
        if c.time_limit_secs == 0 {
            return Err(VmError::BadCase(format!(
                "case '{}' has a time limit of 0 s",
                c.name
            )));
        }
    }
    if cases.is_empty() {
        return Err(VmError::BadCase("no cases to run".into()));
    }
    Ok(())
}

/// `/blklab/cases.list`: `INDEX NAME LIMIT_SECS` per line, in run order.
pub fn cases_list(cases: &[CaseSpec]) -> Result<String> {
    validate(cases)?;
    Ok(cases
        .iter()
        .enumerate()
        .map(|(i, c)| format!("{i} {} {}\n", c.name, c.time_limit_secs))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{parse, CaseOutcome};
    use std::process::Command;

    fn case(name: &str, limit: u32, script: &str) -> CaseSpec {
        CaseSpec {
            name: name.into(),
            script: script.into(),
            time_limit_secs: limit,
        }
    }

    #[test]
    fn list_is_in_order_with_limits() {
        let l = cases_list(&[case("a", 5, ""), case("b.2", 30, "")]).unwrap();
        assert_eq!(l, "0 a 5\n1 b.2 30\n");
    }

    #[test]
    fn bad_names_limits_and_duplicates_are_rejected() {
        for bad in ["", ".x", "a b", "a/b", "x;rm", &"n".repeat(65)] {
            assert!(validate(&[case(bad, 1, "")]).is_err(), "{bad:?}");
        }
        assert!(validate(&[case("a", 0, "")]).is_err());
        assert!(validate(&[case("a", 1, ""), case("a", 1, "")]).is_err());
        assert!(validate(&[]).is_err());
    }

    #[test]
    fn init_mounts_loads_and_reports_in_order() {
        let pos = |s: &str| INIT.find(s).unwrap_or_else(|| panic!("{s} missing"));
        assert!(INIT.starts_with("#!/bin/sh\n"));
        assert!(pos("mount -t devtmpfs") < pos("exec 3>/dev/ttyS1"));
        assert!(pos("exec 3>/dev/ttyS1") < pos("BLKLAB-HELLO"));
        assert!(pos("insmod") < pos("mount -t cgroup2"));
        assert!(pos("+io") < pos("BLKLAB-READY"));
        assert!(pos("BLKLAB-DONE") < pos("exec 3>&-"));
        assert!(pos("exec 3>&-") < pos("poweroff -f"));
        assert!(INIT.contains(RESULTS_TTY));
    }

    /// The runner under the host's busybox sh (the guest's shell), its fd 3
    /// into a file, parsed back by the host-side parser: output with binary
    /// bytes, an extra file, an exit status and a timeout.
    #[test]
    fn runner_frames_parse_back() {
        let Some(bb) = ["/bin/busybox", "/usr/bin/busybox"]
            .into_iter()
            .find(|p| std::path::Path::new(p).is_file())
        else {
            eprintln!("SKIP: busybox is not installed (apt-get install -y busybox-static)");
            return;
        };
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("root");
        std::fs::create_dir_all(root.join("cases")).unwrap();
        let cases = [
            case(
                "bin",
                30,
                "printf 'line\\n\\000\\377\\r\\nend'; echo err >&2; printf trace > \"$BLKLAB_OUT/trace.txt\"; printf x > \"$BLKLAB_OUT/bad name\"; exit 3",
            ),
            case("slow", 1, "exec sleep 20"),
            case("empty", 30, "true"),
        ];
        for c in &cases {
            std::fs::write(root.join(format!("cases/{}.sh", c.name)), &c.script).unwrap();
        }
        std::fs::write(root.join("runner.sh"), RUNNER).unwrap();
        let results = d.path().join("results");
        let script = format!(
            ". {}/runner.sh; run_case 0 bin 30; run_case 1 slow 1; run_case 2 empty 30; echo 'BLKLAB-DONE 3' >&3",
            root.display()
        );
        // The shell opens fd 3 itself (as /init does with the serial port).
        let script3 = format!("exec 3>{}; {script}", results.display());
        let o = Command::new(bb)
            .args(["sh", "-c", &script3])
            .env("BLKLAB_ROOT", &root)
            .env("BLKLAB_WORK", d.path().join("work"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let bytes = std::fs::read(&results).unwrap();
        let names: Vec<String> = cases.iter().map(|c| c.name.clone()).collect();
        let p = parse(&bytes, &names);
        assert!(p.done, "{}", String::from_utf8_lossy(&bytes));
        let r = &p.cases;
        assert_eq!(r[0].outcome, CaseOutcome::Exited { status: 3 });
        assert_eq!(r[0].stdout, b"line\n\0\xff\r\nend");
        assert_eq!(r[0].stderr, b"err\n");
        assert_eq!(r[0].files.len(), 1, "the badly named file is not sent");
        assert_eq!(r[0].files["trace.txt"], b"trace");
        assert_eq!(r[1].outcome, CaseOutcome::TimedOut);
        assert!(r[1].virtual_elapsed_ms.unwrap() >= 1000);
        assert_eq!(r[2].outcome, CaseOutcome::Exited { status: 0 });
        assert!(r[2].stdout.is_empty());
        assert!(
            !d.path().join("work/bin").exists(),
            "case work dirs are removed"
        );
    }
}

//! A case as a shell script for the guest (run by blklab-vm's /init): the
//! same objects the host side builds — a loop device over a tmpfs file, or
//! the capped disk (a loop device over a loop device with the cap on the
//! lower one, written in the case's parent group) — the case's cgroup
//! strings on cgroup v2, and real fio in the groups, started together.
//!
//! What it leaves in `$BLKLAB_OUT` for the harness: `device` (key=value
//! lines: dev, devno, dio, rotational, lower) and `job<I>.r<R>.json`, fio's
//! JSON of job I in repetition R.

use std::fmt::Write as _;

use crate::cases::{Case, HostDevice};
use crate::loop_device::FILE_BYTES;

/// The device the raw-speed probe and every case's backing file use.
const IMG: &str = "\"$BLKLAB_TMP/case.img\"";

/// Quote `s` for a POSIX shell: single quotes, with `'` written as `'\''`.
pub fn sh_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_=./:,+%@".contains(&b))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The case's cgroup string with `{DEV}` as the shell's `$no`, quoted.
fn value(v: &str) -> String {
    // split around {DEV} so the device number expands inside double quotes
    let parts: Vec<String> = v
        .split("{DEV}")
        .map(|p| {
            p.replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('$', "\\$")
                .replace('`', "\\`")
        })
        .collect();
    format!("\"{}\"", parts.join("$no"))
}

/// The script realising `case` (its `idx`-th place in the run) for
/// `runtime_s` seconds per run, `repeat` runs.
pub fn case_script(case: &Case, idx: usize, runtime_s: u32, repeat: u32) -> Result<String, String> {
    let mut s = String::new();
    let _ = writeln!(s, "set -e\n. /blklab/lib.sh");
    let _ = writeln!(s, "truncate -s {FILE_BYTES} {IMG}");
    match &case.device {
        HostDevice::Loop => {
            let _ = writeln!(s, "dev=$(blk_loop {IMG})\nlowerno=");
        }
        HostDevice::Capped { .. } => {
            let _ = writeln!(
                s,
                "lower=$(blk_loop {IMG})\nlowerno=$(blk_devno \"$lower\")\ndev=$(blk_loop \"$lower\")"
            );
        }
    }
    let _ = writeln!(
        s,
        r#"no=$(blk_devno "$dev")
name=${{dev#/dev/}}
echo none > "/sys/block/$name/queue/scheduler" 2>/dev/null || true
{{ echo "dev=$name"; echo "devno=$no"; echo "dio=$(blk_dio "$dev")"
  echo "rotational=$(cat /sys/block/$name/queue/rotational)"; echo "lower=$lowerno"; }} > "$BLKLAB_OUT/device"
P=/sys/fs/cgroup/blklab-case-{idx}
mkdir "$P"
echo +io > "$P/cgroup.subtree_control""#
    );
    for (f, v) in &case.root_files {
        let _ = writeln!(s, "echo {} > /sys/fs/cgroup/{}", value(v), sh_quote(f));
    }
    if let HostDevice::Capped { lower_limit } = &case.device {
        let _ = writeln!(
            s,
            "echo \"$lowerno {}\" > \"$P/io.max\"",
            lower_limit.replace('"', "")
        );
    }
    let dir = |g: &str| -> String {
        let rel = g.trim_start_matches('/');
        if rel.is_empty() {
            "\"$P\"".to_string()
        } else {
            format!("\"$P\"/{}", sh_quote(rel))
        }
    };
    for (g, files) in &case.groups {
        if !g.trim_start_matches('/').is_empty() {
            let _ = writeln!(s, "mkdir -p {}", dir(g));
        }
        for (f, v) in files {
            let _ = writeln!(s, "echo {} > {}/{}", value(v), dir(g), sh_quote(f));
        }
    }
    let n = case.jobs.len();
    for r in 0..repeat.max(1) {
        // a fresh start barrier per repetition
        let _ = writeln!(s, "rm -rf \"$BLKLAB_TMP/barrier\"");
        for (i, j) in case.jobs.iter().enumerate() {
            let args = blklab_fio::parse::split_cmdline(&j.cmdline)
                .map_err(|e| format!("case {}: fio command line: {e}", case.name))?;
            let quoted: Vec<String> = args.iter().map(|a| sh_quote(a)).collect();
            let _ = writeln!(
                s,
                "blk_in_cgroup {} $FIO {} --runtime={runtime_s} --time_based --filename=\"$dev\" \"$(blk_barrier_opt j{i})\" --output-format=json --output=\"$BLKLAB_OUT/job{i}.r{r}.json\" &\npid{i}=$!",
                dir(&j.cgroup),
                quoted.join(" ")
            );
        }
        let _ = writeln!(s, "blk_barrier_release {n}");
        for i in 0..n {
            let _ = writeln!(s, "wait \"$pid{i}\"");
        }
    }
    Ok(s)
}

/// fio QD1 4k random reads on a fresh loop device over tmpfs, outside any
/// group: the guest's raw device speed, given to the simulated device.
pub fn raw_script(seconds: u32) -> String {
    format!(
        r#"set -e
. /blklab/lib.sh
truncate -s {FILE_BYTES} {IMG}
dev=$(blk_loop {IMG})
$FIO {} --filename="$dev"
"#,
        crate::loop_device::raw_fio_options(seconds)
    )
}

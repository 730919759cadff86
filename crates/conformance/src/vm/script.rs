//! A case as a shell script for the guest (run by blklab-vm's /init): the
//! same objects the host side builds — a loop device over a tmpfs file, or
//! the capped disk (a loop device over a loop device with the cap on the
//! lower one, written in the case's parent group) — the case's cgroup
//! strings on cgroup v2, and real fio in the groups, started together.
//!
//! What it leaves in `$BLKLAB_OUT` for the harness: `device` (key=value
//! lines: dev, devno, dio, rotational, lower), `job<I>.r<R>.json`, fio's
//! JSON of job I in repetition R, and after each repetition every group's
//! `io.stat` and `io.latency` (`iostat.<group>.r<R>`, `iolatency.<group>.r<R>`;
//! blk-cgroup's `blkcg_debug_stats` is switched on so that blk-iolatency's
//! fields appear). blk-iolatency cases also sample the groups' io.stat every
//! 200 ms while the jobs run (`iostat-series.r<R>`: uptime, group, the line
//! of the case's device).

use std::fmt::Write as _;

use crate::cases::{Case, HostDevice};
use crate::loop_device::FILE_BYTES;
use crate::vm::guest_cpu;

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

/// The file a repetition's `iocost_ioc_vrate_adj` lines are left in.
pub fn qos_trace_file(rep: u32) -> String {
    format!("vrate_adj.r{rep}.trace")
}

/// The file a repetition's whole iocost trace is left in: the
/// `iocost_ioc_vrate_adj` lines and the per-cgroup events of each period
/// (`IOCG_EVENTS`), for reading the QoS loop period by period
/// (`--guest-files`); the harness itself reads only the vrate lines.
pub fn iocost_trace_file(rep: u32) -> String {
    format!("iocost.r{rep}.trace")
}

/// blk-iocost's per-cgroup tracepoints (include/trace/events/iocost.h)
/// captured beside `iocost_ioc_vrate_adj`: a group's activation and going
/// idle, and the period's inuse changes (shortage resets, donations, the
/// issue path's raise). A few lines per group and period; a kernel without
/// one of them skips it.
const IOCG_EVENTS: &str = "iocost_iocg_activate iocost_iocg_idle iocost_inuse_shortage iocost_inuse_transfer iocost_inuse_adjust iocost_iocg_forgive_debt";

/// The shell loop writing `on` (1 or 0) to every `IOCG_EVENTS` enable file.
fn iocg_events(on: u8) -> String {
    format!("for _e in {IOCG_EVENTS}; do echo {on} > $T/events/iocost/$_e/enable 2>/dev/null || true; done\n")
}

/// A group's name in file names: its path below the case's parent group
/// with `/` as `_` and anything outside [A-Za-z0-9._-] as `_` (the names the
/// guest's runner sends); the parent group itself is `root`.
pub fn group_tag(g: &str) -> String {
    let rel = g.trim_matches('/');
    if rel.is_empty() {
        return "root".into();
    }
    rel.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The file group `g`'s io.stat is left in after repetition `rep`.
pub fn io_stat_file(g: &str, rep: u32) -> String {
    format!("iostat.{}.r{rep}", group_tag(g))
}

/// The file group `g`'s io.latency is left in after repetition `rep`.
pub fn io_latency_file(g: &str, rep: u32) -> String {
    format!("iolatency.{}.r{rep}", group_tag(g))
}

/// The file of repetition `rep`'s io.stat samples (blk-iolatency cases).
pub fn io_stat_series_file(rep: u32) -> String {
    format!("iostat-series.r{rep}")
}

/// How often the io.stat sampler of blk-iolatency cases reads (µs).
const SERIES_PERIOD_US: u32 = 200_000;

/// blk-cgroup's switch for the policies' debug fields in io.stat: without
/// it `iolatency_pd_stat` prints nothing.
const DEBUG_STATS: &str = "/sys/module/blk_cgroup/parameters/blkcg_debug_stats";

/// tracefs, mounted by blklab-vm's /init.
const TRACEFS: &str = "/sys/kernel/tracing";

/// Whether the script captures the guest's CPU accounting and a scheduler
/// trace (guest_cpu.rs): the bfq cases and the capped disk's cases with
/// no controller of their own ([`capped_race`]), whose split depends on
/// how the one vCPU is shared, and never with the QoS trace (one tracefs
/// buffer).
pub fn traces_cpu(case: &Case) -> bool {
    (case.need == crate::cases::Need::Bfq || capped_race(case)) && !case.trace_qos
}

/// A capped-disk case whose only controller is the lower device's
/// blk-throttle and whose groups set nothing: its groups race for each
/// slice's budget (throttle_race.rs), so its trace window spans slices.
/// `capped-qos-iocost-off` (weights for iocost's comparison) keeps its
/// untraced runs: the trace costs the guest CPU in its window.
fn capped_race(case: &Case) -> bool {
    case.need == crate::cases::Need::Throttle
        && matches!(case.device, HostDevice::Capped { .. })
        && case.groups.iter().all(|(_, files)| files.is_empty())
}

/// The environment variable naming scheduler features to set in the guest
/// before a case (an experiment, docs/fidelity/conformance.md: e.g.
/// `NO_PLACE_LAG` on 6.12, `NO_WAKEUP_PREEMPTION` on 6.1).
pub const SCHED_FEATURES_VAR: &str = "BLKLAB_GUEST_SCHED_FEATURES";

/// Shell: write each of `features` (whitespace-separated names such as
/// `NO_PLACE_LAG`) to /sys/kernel/debug/sched/features and print the
/// features line the kernel reads back to the case's stderr.
fn sched_features(features: &str) -> Result<String, String> {
    let mut s = String::from("mount -t debugfs none /sys/kernel/debug 2>/dev/null || true\n");
    for x in features.split_whitespace() {
        if !x
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
        {
            return Err(format!(
                "{SCHED_FEATURES_VAR}: \"{x}\": expected a scheduler feature name (A-Z, 0-9, _)"
            ));
        }
        s += &format!(
            "echo {x} > /sys/kernel/debug/sched/features || echo 'sched feature {x} refused' >&2\n"
        );
    }
    s += "echo \"sched features: $(cat /sys/kernel/debug/sched/features)\" >&2\n";
    Ok(s)
}

/// The script realising `case` (its `idx`-th place in the run) for
/// `runtime_s` seconds per run, `repeat` runs.
pub fn case_script(case: &Case, idx: usize, runtime_s: u32, repeat: u32) -> Result<String, String> {
    let mut s = String::new();
    let _ = writeln!(s, "set -e\n. /blklab/lib.sh");
    if let Ok(f) = std::env::var(SCHED_FEATURES_VAR) {
        s += &sched_features(&f)?;
    }
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
echo {sched} > "/sys/block/$name/queue/scheduler"{sched_err}
{{ echo "dev=$name"; echo "devno=$no"; echo "dio=$(blk_dio "$dev")"
  echo "rotational=$(cat /sys/block/$name/queue/rotational)"; echo "lower=$lowerno"; }} > "$BLKLAB_OUT/device"
P=/sys/fs/cgroup/blklab-case-{idx}
mkdir "$P"
echo +io > "$P/cgroup.subtree_control""#,
        sched = sh_quote(&case.scheduler.name),
        // a kernel without schedulers still runs the `none` cases
        sched_err = if case.scheduler.name == "none" {
            " 2>/dev/null || true"
        } else {
            ""
        },
    );
    for (k, v) in &case.scheduler.tunables {
        let _ = writeln!(
            s,
            "echo {} > \"/sys/block/$name/queue/iosched/\"{}",
            sh_quote(v),
            sh_quote(k)
        );
    }
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
    let _ = writeln!(s, "echo 1 > {DEBUG_STATS} 2>/dev/null || true");
    let series = case.need == crate::cases::Need::IoLatency;
    let trace_cpu = traces_cpu(case);
    let n = case.jobs.len();
    for r in 0..repeat.max(1) {
        // a fresh start barrier per repetition
        let _ = writeln!(s, "rm -rf \"$BLKLAB_TMP/barrier\"");
        if r > 0 {
            // blk-iolatency's state outlives a run (the throttled sibling's
            // depth and use_delay, the parent's cookie). Changing a target
            // resets the parent's scaling (`iolatency_clear_scaling`); the
            // detour is a non-zero target so the policy stays enabled. A
            // sibling returns to unlimited depth at its next submission
            // (`check_scale_change` sees the default cookie): one read in
            // each group without a target does that before the jobs start,
            // or A's first miss could come first and leave it at depth 1.
            let mut reset = false;
            for (g, files) in &case.groups {
                for (f, v) in files.iter().filter(|(f, _)| f == "io.latency") {
                    let _ = writeln!(
                        s,
                        "echo \"$no target=1000000\" > {d}/{f}\necho {} > {d}/{f}",
                        value(v),
                        d = dir(g)
                    );
                    reset = true;
                }
            }
            if reset {
                let _ = writeln!(s, "echo 1 > /proc/sys/vm/drop_caches");
                for (g, files) in &case.groups {
                    if !files.iter().any(|(f, _)| f == "io.latency") {
                        let _ = writeln!(
                            s,
                            "blk_in_cgroup {} dd if=\"$dev\" of=/dev/null bs=4096 count=1 2>/dev/null || echo \"reset read in {g} failed\" >&2",
                            dir(g)
                        );
                    }
                }
            }
        }
        if case.trace_qos {
            // a fresh buffer per repetition, large enough for a period a
            // millisecond long over the whole run
            let _ = writeln!(
                s,
                "T={TRACEFS}\necho 0 > $T/tracing_on\necho 8192 > $T/buffer_size_kb\necho > $T/trace\necho 1 > $T/events/iocost/iocost_ioc_vrate_adj/enable\n{}echo 1 > $T/tracing_on",
                iocg_events(1)
            );
        }
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
        if series {
            let mut body = String::new();
            for (g, _) in &case.groups {
                let _ = write!(
                    body,
                    "echo \"$t {} $(grep \"^$no \" {}/io.stat)\"; ",
                    group_tag(g),
                    dir(g)
                );
            }
            let _ = writeln!(
                s,
                "( set +e; while :; do t=$(cut -d' ' -f1 /proc/uptime); {body}usleep {SERIES_PERIOD_US}; done ) > \"$BLKLAB_OUT/{}\" 2>/dev/null &\nsampler=$!",
                io_stat_series_file(r)
            );
        }
        let _ = writeln!(s, "blk_barrier_release {n}");
        let cpu_groups: Vec<(String, String)> = if trace_cpu {
            case.groups
                .iter()
                .map(|(g, _)| (group_tag(g), dir(g)))
                .collect()
        } else {
            Vec::new()
        };
        if trace_cpu {
            s += &guest_cpu::snapshot(0, r, &cpu_groups);
            s += &guest_cpu::trace_start(if capped_race(case) {
                guest_cpu::RACE_WINDOW_US
            } else {
                guest_cpu::WINDOW_US
            });
        }
        for i in 0..n {
            let _ = writeln!(s, "wait \"$pid{i}\"");
        }
        if trace_cpu {
            s += &guest_cpu::trace_stop(r);
            s += &guest_cpu::snapshot(1, r, &cpu_groups);
        }
        if series {
            let _ = writeln!(
                s,
                "kill \"$sampler\" 2>/dev/null || true\nwait \"$sampler\" 2>/dev/null || true"
            );
        }
        for (g, _) in &case.groups {
            let _ = writeln!(
                s,
                "cat {d}/io.stat > \"$BLKLAB_OUT/{}\" 2>/dev/null || true\ncat {d}/io.latency > \"$BLKLAB_OUT/{}\" 2>/dev/null || true",
                io_stat_file(g, r),
                io_latency_file(g, r),
                d = dir(g)
            );
        }
        if case.trace_qos {
            let _ = writeln!(
                s,
                "echo 0 > $T/tracing_on\necho 0 > $T/events/iocost/iocost_ioc_vrate_adj/enable\n{}grep iocost_ioc_vrate_adj $T/trace > \"$BLKLAB_OUT/{}\" || true\ngrep -v '^#' $T/trace > \"$BLKLAB_OUT/{}\" || true",
                iocg_events(0),
                qos_trace_file(r),
                iocost_trace_file(r)
            );
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

/// How long the quiet-submit probe's fio runs: its trace window opens 2 s
/// in (`guest_cpu::trace_start`), so at least that and the window.
pub const QUIET_SECONDS: u32 = 3;

/// The guest's quiet-submit probe (probe_cpu.rs): `QUIET_JOBS` jobs at
/// `QUIET_IODEPTH` on a fresh loop device over tmpfs without a scheduler,
/// outside any group, with the scheduler trace of a window in the middle
/// (`sched.r0.trace`, to check that the submit calls wake nobody and are
/// not preempted) and the device's MAJ:MIN in `device`. fio's JSON is the
/// script's stdout.
pub fn quiet_script() -> String {
    format!(
        r#"set -e
. /blklab/lib.sh
truncate -s {FILE_BYTES} "$BLKLAB_TMP/quiet.img"
dev=$(blk_loop "$BLKLAB_TMP/quiet.img")
name=${{dev#/dev/}}
echo none > "/sys/block/$name/queue/scheduler" 2>/dev/null || true
echo "devno=$(blk_devno "$dev")" > "$BLKLAB_OUT/device"
{}$FIO {} --filename="$dev"
{}"#,
        guest_cpu::trace_start(guest_cpu::WINDOW_US),
        crate::probe_cpu::quiet_fio_options(QUIET_SECONDS),
        guest_cpu::trace_stop(0)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::select;

    #[test]
    fn the_quiet_probe_runs_several_jobs_and_traces_a_window() {
        let s = quiet_script();
        assert!(
            s.contains("--numjobs=4") && s.contains("--iodepth=8"),
            "{s}"
        );
        assert!(s.contains("--runtime=3 "), "{s}");
        assert!(
            s.contains("echo none > \"/sys/block/$name/queue/scheduler\""),
            "{s}"
        );
        let (start, stop) = (s.find("tracing_on").unwrap(), s.find("$FIO").unwrap());
        assert!(start < stop, "the window opens while fio runs: {s}");
        assert!(s.contains(&guest_cpu::trace_file(0)), "{s}");
    }

    fn script(name: &str) -> String {
        let c = select(&[name.into()]).unwrap().remove(0);
        case_script(&c, 3, 5, 2).unwrap()
    }

    #[test]
    fn the_scheduler_and_its_tunables_are_set_on_the_upper_device() {
        let s = script("ioprio-rt-be-mq-deadline");
        let sched = s.find("echo mq-deadline > \"/sys/block/$name/queue/scheduler\"\n");
        let tun = s.find("echo 1000 > \"/sys/block/$name/queue/iosched/\"prio_aging_expire");
        assert!(sched.is_some() && tun.is_some(), "{s}");
        // the tunable exists only once the scheduler is in place
        assert!(sched < tun);
        assert!(s.contains("--prioclass=1"), "{s}");
        // a `none` case tolerates a kernel without the scheduler file
        let s = script("throttle-riops");
        assert!(s.contains("echo none > \"/sys/block/$name/queue/scheduler\" 2>/dev/null || true"));
        assert!(!s.contains("iosched"), "{s}");
    }

    #[test]
    fn qos_cases_trace_each_repetition_into_its_own_file() {
        let s = script("capped-qos-iocost-on");
        for r in 0..2 {
            let f = qos_trace_file(r);
            assert!(
                s.contains(&format!(
                    "grep iocost_ioc_vrate_adj $T/trace > \"$BLKLAB_OUT/{f}\""
                )),
                "{s}"
            );
        }
        // the whole iocost trace too, with the per-cgroup events on and off
        // around each repetition
        assert!(s.contains(&format!(
            "grep -v '^#' $T/trace > \"$BLKLAB_OUT/{}\"",
            iocost_trace_file(1)
        )));
        assert_eq!(
            s.matches("do echo 1 > $T/events/iocost/$_e/enable").count(),
            2
        );
        assert_eq!(
            s.matches("do echo 0 > $T/events/iocost/$_e/enable").count(),
            2
        );
        assert!(s.contains("iocost_inuse_transfer"));
        // enabled before the jobs start, cleared per repetition
        let on = s
            .find("echo 1 > $T/events/iocost/iocost_ioc_vrate_adj/enable")
            .unwrap();
        let iocg_on = s.find("do echo 1 > $T/events/iocost/$_e/enable").unwrap();
        let tracing_on = s.find("echo 1 > $T/tracing_on").unwrap();
        assert!(on < iocg_on && iocg_on < tracing_on);
        assert!(tracing_on < s.find("blk_barrier_release").unwrap());
        assert_eq!(s.matches("echo > $T/trace").count(), 2);
        assert!(!script("capped-qos-iocost-off").contains("tracing"));
    }

    #[test]
    fn every_group_leaves_its_io_stat_and_io_latency_after_each_repetition() {
        let s = script("iolatency-protect-tight");
        // blk-iolatency's fields appear only with blk-cgroup's debug stats
        let dbg = s.find(&format!("echo 1 > {DEBUG_STATS}")).unwrap();
        assert!(dbg < s.find("blk_barrier_release").unwrap(), "{s}");
        for r in 0..2 {
            for g in ["A", "B"] {
                assert!(
                    s.contains(&format!(
                        "cat \"$P\"/{g}/io.stat > \"$BLKLAB_OUT/iostat.{g}.r{r}\" 2>/dev/null || true"
                    )),
                    "{s}"
                );
                assert!(s.contains(&format!(
                    "cat \"$P\"/{g}/io.latency > \"$BLKLAB_OUT/iolatency.{g}.r{r}\""
                )));
            }
            // sampled while the jobs run, stopped before the snapshots
            let f = io_stat_series_file(r);
            let start = s.find(&format!("> \"$BLKLAB_OUT/{f}\"")).unwrap();
            let snap = s.find(&format!("iostat.A.r{r}")).unwrap();
            assert!(start < snap);
        }
        assert_eq!(s.matches("usleep 200000").count(), 2, "{s}");
        assert!(s.contains("kill \"$sampler\""));
        // other cases keep their snapshots but do not sample
        let t = script("capped-qos-iocost-on");
        assert!(
            t.contains("iostat.A.r1") && !t.contains("iostat-series"),
            "{t}"
        );
    }

    #[test]
    fn bfq_cases_capture_the_cpu_split_of_each_repetition() {
        let s = script("bfq-800-100-1j-qd1");
        if let Ok(p) = std::env::var("BLKLAB_DUMP_SCRIPT") {
            std::fs::write(p, &s).unwrap();
        }
        let release = s.find("blk_barrier_release").unwrap();
        for r in 0..2 {
            let cpu = format!(">> \"$BLKLAB_OUT/{}\"", guest_cpu::cpu_file(r));
            // two snapshots per repetition: at the release and after the jobs
            assert_eq!(s.matches(&cpu).count(), 2, "{s}");
            assert!(s.contains(&format!("> \"$BLKLAB_OUT/{}\"", guest_cpu::trace_file(r))));
        }
        let first = s.find("stat 0 $(head -n1 /proc/stat)").unwrap();
        assert!(release < first, "{s}");
        assert!(
            s.contains("procs A $(tr '\\n' ' ' < \"$P\"/A/cgroup.procs)"),
            "{s}"
        );
        // the buffer is bounded and stops when full
        assert!(s.contains("echo 4096 > $T/buffer_size_kb && echo 0 > $T/options/overwrite"));
        assert!(s.contains("usleep 50000; echo 0 > $T/tracing_on"));
        // the last wait precedes the trace's end
        assert!(s.rfind("wait \"$pid1\"").unwrap() < s.rfind("wait \"$tracer\"").unwrap());
        assert!(!script("throttle-riops").contains("sched_switch"));
    }

    #[test]
    fn scheduler_features_are_written_and_read_back_and_bad_names_refused() {
        let s = sched_features("NO_PLACE_LAG NO_RUN_TO_PARITY").unwrap();
        assert!(
            s.contains("echo NO_PLACE_LAG > /sys/kernel/debug/sched/features"),
            "{s}"
        );
        assert!(
            s.contains("echo NO_RUN_TO_PARITY > /sys/kernel/debug/sched/features"),
            "{s}"
        );
        assert!(
            s.contains("sched features: $(cat /sys/kernel/debug/sched/features)"),
            "{s}"
        );
        let e = sched_features("NO_PLACE_LAG; reboot").unwrap_err();
        assert!(
            e.contains("BLKLAB_GUEST_SCHED_FEATURES: \"NO_PLACE_LAG;\""),
            "{e}"
        );
    }

    #[test]
    fn capped_race_cases_trace_two_throttle_slices() {
        for case in ["capped-qd1-beside-qd128", "iolatency-protect-off"] {
            let s = script(case);
            assert!(s.contains("sched_switch"), "{case}");
            assert!(
                s.contains("usleep 250000; echo 0 > $T/tracing_on"),
                "{case}"
            );
        }
        // the iocost and io.latency cases keep their traces untouched
        for case in ["capped-qos-iocost-on", "iolatency-protect-on"] {
            assert!(!script(case).contains("sched_switch"), "{case}");
        }
    }

    #[test]
    fn group_tags_are_names_the_guest_sends() {
        assert_eq!(group_tag("/A"), "A");
        assert_eq!(group_tag("/"), "root");
        assert_eq!(group_tag("/a/b c"), "a_b_c");
        assert_eq!(io_stat_file("/x/y", 2), "iostat.x_y.r2");
    }

    #[test]
    fn io_latency_is_reset_between_repetitions() {
        let s = script("iolatency-protect-tight");
        let reset = "echo \"$no target=1000000\" > \"$P\"/A/io.latency\necho \"$no target=100\" > \"$P\"/A/io.latency";
        // once before each repetition after the first, before its jobs start
        assert_eq!(s.matches(reset).count(), 1, "{s}");
        let at = s.find(reset).unwrap();
        assert!(at > s.find("job0.r0.json").unwrap() && at < s.find("job0.r1.json").unwrap());
        // then one read in B (no target) brings B back to unlimited depth
        let kick = "blk_in_cgroup \"$P\"/B dd if=\"$dev\" of=/dev/null bs=4096 count=1";
        assert_eq!(s.matches(kick).count(), 1, "{s}");
        assert!(s.find(kick).unwrap() > at);
        assert!(!s.contains("\"$P\"/A dd"));
        assert!(!script("iolatency-protect-off").contains("target=1000000"));
    }
}

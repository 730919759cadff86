//! The simulator's scheduler tracepoints (sim::sched_tracepoints) read by
//! the guest's trace reader (`blklab run --trace F --sched-split`,
//! blklab-conformance's vm/sched_trace.rs): a tiny one-CPU run whose trace
//! is worked out by hand, the same bytes on every run, and no result changed
//! by tracing.

mod common;
use common::*;

/// fio's costs: a 10 µs submit (the bio 4 µs in, `submit_return_ns` 6 µs
/// after), a 1 µs reap; every wake-up is 3 µs (`wake_ns`).
const RUN: &str = "[run]\nseed = 1\nhz = 250\nsubmit_ns = 10000\nreap_ns = 1000\n";

/// One fio job, QD1, `n` requests, in /A, on loop99.
fn job(n: u32) -> String {
    format!("[cgroup.\"/A\"]\n\n[[job]]\nlabel = \"A\"\ncgroup = \"/A\"\ncmdline = \"--name=A --direct=1 --ioengine=libaio --rw=randread --bs=4k --iodepth=1 --number_ios={n}\"\ndevice = \"loop99\"\n")
}

/// Three requests on a tmpfs loop device whose worker costs 4 µs, on one
/// CPU with wake-up preemption, FIFO run queue.
fn tiny() -> String {
    format!(
        "{RUN}{GUEST_MACHINE_LOOP99}worker_ns = 4000\nbacking = \"tmpfs\"\n\n{}",
        job(3)
    )
}

/// Two requests on loop99 stacked on a tmpfs loop device (both workers 4
/// µs); run without wake-up preemption (fio blocks at the end of its
/// submit call).
fn stacked() -> String {
    format!(
        "{RUN}{GUEST_MACHINE_LOOP99}backend = \"loop98\"\nworker_ns = 4000\n\n[[device]]\nname = \"loop98\"\ndevno = \"7:98\"\nrotational = false\ncapacity = \"67108864\"\n[device.model]\nkind = \"loop\"\nbacking = \"tmpfs\"\nworker_ns = 4000\n\n{}",
        job(2)
    )
}

/// (the trace, the run's output) of `blklab run` of [`tiny`], traced or not,
/// with the trace's analysis or not.
fn run(name: &str, traced: bool, split: bool) -> (String, String) {
    run_toml(&tiny(), name, traced, split, &[])
}

/// [`run`] of scenario `toml`.
fn run_toml(toml: &str, name: &str, traced: bool, split: bool, extra: &[&str]) -> (String, String) {
    let dir = scratch(&format!("sched-trace-{name}"));
    let sc = dir.join("tiny.toml");
    std::fs::write(&sc, toml).unwrap();
    let tr = dir.join("trace");
    let mut args = vec!["run", "--output-format", "json", sc.to_str().unwrap()];
    if traced {
        args.extend(["--trace", tr.to_str().unwrap()]);
    }
    if split {
        args.push("--sched-split");
    }
    args.extend(extra);
    let o = blklab(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let trace = std::fs::read_to_string(&tr).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&dir);
    (trace, stdout(&o))
}

#[test]
fn a_tiny_runs_trace_reads_as_worked_out_by_hand_and_is_the_same_every_run() {
    let (trace, out) = run("a", true, true);
    let (again, _) = run("b", true, true);
    assert_eq!(trace, again, "the trace is deterministic");
    // each request: fio gets the CPU (3 µs wake-up), issues 4 µs into its
    // call and wakes the worker, which takes the CPU at the call's end 6 µs
    // later (fio preempted, `R+`); the worker's wake-up (3 µs) and item (4
    // µs) complete the request before fio runs again; fio's reap (1 µs)
    let lines: Vec<&str> = trace.lines().collect();
    assert_eq!(lines.len(), 21, "{trace}");
    assert_eq!(
        lines[2],
        "             fio-1000    [000] .....     0.000007: block_rq_issue: 7,99 R 4096 () 10920 + 8 [fio]"
    );
    assert_eq!(
        lines[4],
        "             fio-1000    [000] .....     0.000013: sched_switch: prev_comm=fio prev_pid=1000 prev_prio=120 prev_state=R+ ==> next_comm=kworker/u2:0 next_pid=100 next_prio=120"
    );
    assert_eq!(
        lines[5],
        "    kworker/u2:0-100     [000] .....     0.000016: workqueue_execute_start: work struct 000000005eed4000: function loop_workfn [loop]"
    );
    let split = out
        .lines()
        .find(|l| l.starts_with("sim sched trace"))
        .unwrap_or_else(|| panic!("no analysis in {out}"));
    for want in [
        "(0.1 ms, 3 requests)",
        // 3 + 10 + 1 µs of fio, the worker's 4 µs item and 3 µs wake-up
        "fio /A 14.00, loop_workfn [loop] 4.00 (1.00 items), kworkers outside work 3.00, other tasks 0.00, idle 0.00",
        "loop_workfn [loop] 3 times, 100.0 % preempting fio at once, 6.0 µs to run",
        "fio preempted 3 times, 100.0 % of them with a loop work item done before fio ran again",
        "fio switched out on its way back 3 times (blocked instead 0 times), median 6.0 µs after its issue",
    ] {
        assert!(split.contains(want), "{want}\n{split}");
    }
}

#[test]
fn tracing_changes_no_result() {
    let (_, plain) = run("plain", false, false);
    let (trace, traced) = run("traced", true, false);
    assert!(trace.contains("sched_switch"), "{trace}");
    // the fio JSON holds the run's time: identical, field for field
    assert_eq!(plain, traced);
}

/// On one CPU the upper loop request completes inside the lower one's
/// completion (`blk_mq_complete_request` completes locally,
/// block/blk-mq.c), in the lower worker's context: fio is woken by the
/// kworker before the kworker's item ends, as the 6.1 guests' traces show,
/// not by an interrupt after the kworker slept (stack.rs).
#[test]
fn a_stacked_loop_request_completes_in_the_lower_workers_context() {
    let (trace, out) = run_toml(
        &stacked(),
        "stacked",
        true,
        true,
        &["--set", "host.wakeup_preempt=false"],
    );
    let lines: Vec<&str> = trace.lines().collect();
    // the upper item issues below at 20 µs; the lower item (the same
    // kworker: the woken one has not run yet) reads 4 µs, and fio is woken
    // there, before the item ends
    assert_eq!(
        lines[10],
        "    kworker/u2:0-100     [000] .....     0.000024: sched_wakeup: comm=fio pid=1000 prio=120 target_cpu=000",
        "{trace}"
    );
    assert!(
        lines[11].contains("0.000024: workqueue_execute_end: work struct 000000005eed4040"),
        "{trace}"
    );
    assert!(
        out.contains("fio woken by kworkers 2 times, 0 preempting them"),
        "{out}"
    );
}

/// `--sched-window` must be FROM..TO whole ms, FROM below TO, in range;
/// `--sched-split` reads the trace back only from a regular file.
#[test]
fn bad_sched_split_input_is_refused_with_what_was_expected() {
    let dir = scratch("sched-trace-bad");
    let sc = dir.join("tiny.toml");
    std::fs::write(&sc, tiny()).unwrap();
    let tr = dir.join("trace");
    for w in ["5..3", "3..3", "x..5", "5", "1..99999999999999999"] {
        let o = blklab(&[
            "run",
            sc.to_str().unwrap(),
            "--trace",
            tr.to_str().unwrap(),
            "--sched-split",
            "--sched-window",
            w,
        ]);
        assert!(!o.status.success(), "--sched-window {w} accepted");
        let e = stderr(&o);
        assert!(
            e.contains(&format!("--sched-window {w}: expected FROM..TO in ms")),
            "{w}: {e}"
        );
    }
    // a trace written to a device cannot be read back whole
    let o = blklab(&[
        "run",
        sc.to_str().unwrap(),
        "--trace",
        "/dev/null",
        "--sched-split",
    ]);
    assert!(!o.status.success(), "a trace on /dev/null was read back");
    let e = stderr(&o);
    assert!(
        e.contains("/dev/null: not a regular file (a character device); a trace file must be a regular file"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

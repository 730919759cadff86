//! What a calibration measures: the fio jobs, in order. The throughput and
//! IOPS jobs are iocost_coef_gen.py's (tools/cgroup/ in the kernel): sequential
//! bandwidth at QD1 with one huge block (128 MiB there, split by the kernel
//! into max_sectors_kb requests), sequential and random 4 KiB IOPS at QD64,
//! with the elevator `none` and `nomerges=1` while they run. To those the
//! simulator's `ssd` model needs: QD1 latency distributions per operation and
//! size, IOPS against queue depth (internal parallelism) and a 70/30 mix
//! (read/write interference).

/// One fio job of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// Stable name (fio's `--name`, and the key the fits look up).
    pub id: String,
    /// What the figure is for, in words.
    pub what: String,
    /// fio's options without `--filename` and `--output-format` (the
    /// simulator parses the same string).
    pub args: String,
    pub runtime_s: u32,
    /// Whether the job writes (left out without --destructive on a device).
    pub writes: bool,
}

/// Common options: direct I/O through libaio, as iocost_coef_gen.py runs fio.
pub fn job_args(id: &str, rw: &str, bs: &str, qd: u32, runtime_s: u32, extra: &str) -> String {
    let mut s = format!(
        "--name={id} --direct=1 --ioengine=libaio --rw={rw} --bs={bs} --iodepth={qd} --time_based --runtime={runtime_s}"
    );
    if !extra.is_empty() {
        s.push(' ');
        s.push_str(extra);
    }
    s
}

fn job(id: &str, what: &str, rw: &str, bs: &str, qd: u32, runtime_s: u32, extra: &str) -> Job {
    Job {
        id: id.to_string(),
        what: what.to_string(),
        args: job_args(id, rw, bs, qd, runtime_s, extra),
        runtime_s,
        writes: rw.contains("write") || rw.contains("rw"),
    }
}

/// Queue depths of the parallelism sweep (4 KiB random reads).
pub fn sweep_depths(quick: bool) -> &'static [u32] {
    if quick {
        &[8, 64]
    } else {
        &[2, 4, 8, 16, 32, 64, 128]
    }
}

/// Seconds per measurement job.
pub fn runtime_s(quick: bool) -> u32 {
    if quick {
        3
    } else {
        20
    }
}

/// The big sequential block: 128 MiB as iocost_coef_gen.py (16 MiB in
/// --quick), at most a quarter of the target.
pub fn big_block_bytes(quick: bool, size_bytes: u64) -> u64 {
    let want: u64 = if quick { 16 << 20 } else { 128 << 20 };
    let cap = (size_bytes / 4) & !((1 << 20) - 1);
    want.min(cap).max(1 << 20)
}

pub const LAT_READ_4K: &str = "lat-randread-4k-qd1";
pub const LAT_WRITE_4K: &str = "lat-randwrite-4k-qd1";
pub const LAT_READ_64K: &str = "lat-randread-64k-qd1";
pub const LAT_WRITE_64K: &str = "lat-randwrite-64k-qd1";
pub const RAND_WRITE_QD64: &str = "randwrite-4k-qd64";
pub const SEQ_READ_4K: &str = "read-4k-qd64";
pub const SEQ_WRITE_4K: &str = "write-4k-qd64";
pub const SEQ_READ_BIG: &str = "read-big-qd1";
pub const SEQ_WRITE_BIG: &str = "write-big-qd1";
pub const MIX: &str = "randrw-70-30-4k-qd32";

/// The sweep job's id at queue depth `qd` (QD64 is iocost_coef_gen.py's rrandiops).
pub fn rand_read_id(qd: u32) -> String {
    format!("randread-4k-qd{qd}")
}

/// The whole plan; `writes` false leaves out every job that writes.
pub fn plan(quick: bool, size_bytes: u64, writes: bool) -> Vec<Job> {
    let t = runtime_s(quick);
    let big = format!("{}", big_block_bytes(quick, size_bytes));
    let mut v = vec![
        job(
            LAT_READ_4K,
            "read latency distribution, 4 KiB, QD1",
            "randread",
            "4k",
            1,
            t,
            "",
        ),
        job(
            LAT_WRITE_4K,
            "write latency distribution, 4 KiB, QD1",
            "randwrite",
            "4k",
            1,
            t,
            "",
        ),
        job(
            LAT_READ_64K,
            "read latency, 64 KiB, QD1 (per-byte cost)",
            "randread",
            "64k",
            1,
            t,
            "",
        ),
    ];
    if !quick {
        v.push(job(
            LAT_WRITE_64K,
            "write latency, 64 KiB, QD1",
            "randwrite",
            "64k",
            1,
            t,
            "",
        ));
    }
    for &qd in sweep_depths(quick) {
        v.push(job(
            &rand_read_id(qd),
            &format!("4 KiB random read IOPS at QD{qd} (parallelism; QD64 = rrandiops)"),
            "randread",
            "4k",
            qd,
            t,
            "",
        ));
    }
    v.extend([
        job(
            RAND_WRITE_QD64,
            "4 KiB random write IOPS, QD64 (wrandiops)",
            "randwrite",
            "4k",
            64,
            t,
            "",
        ),
        job(
            SEQ_READ_4K,
            "4 KiB sequential read IOPS, QD64 (rseqiops)",
            "read",
            "4k",
            64,
            t,
            "",
        ),
        job(
            SEQ_WRITE_4K,
            "4 KiB sequential write IOPS, QD64 (wseqiops)",
            "write",
            "4k",
            64,
            t,
            "",
        ),
        job(
            SEQ_READ_BIG,
            "sequential read bandwidth, one big block at QD1 (rbps)",
            "read",
            &big,
            1,
            t,
            "",
        ),
        job(
            SEQ_WRITE_BIG,
            "sequential write bandwidth, one big block at QD1 (wbps)",
            "write",
            &big,
            1,
            t,
            "",
        ),
        job(
            MIX,
            "70/30 random read/write mix, 4 KiB, QD32 (interference)",
            "randrw",
            "4k",
            32,
            t,
            "--rwmixread=70",
        ),
    ]);
    v.retain(|j| writes || !j.writes);
    v
}

/// The part of the target the jobs use: all of it, or with `--quick` at
/// most the first GiB (so that preconditioning it fits the two minutes).
pub fn span_bytes(quick: bool, size_bytes: u64) -> u64 {
    if quick {
        size_bytes.min(1 << 30)
    } else {
        size_bytes
    }
}

/// Keep every job inside the first `span` bytes (fio's `--size`).
pub fn limit_to(jobs: &mut [Job], span: u64) {
    for j in jobs {
        j.args.push_str(&format!(" --size={span}"));
    }
}

/// The write speed the preconditioning time is stated at: a slow cloud
/// volume's (most devices are faster; fio stops when the span is written).
pub const PRECONDITION_BPS: u64 = 20_000_000;

pub const PRECONDITION: &str = "precondition";

/// Preconditioning: the whole span written once, sequentially in 1 MiB
/// blocks at QD8, before anything is measured, as resctl-bench does before
/// its benchmarks. Without it a fresh (sparse, trimmed, never written)
/// target reads holes while it is measured and data once the write tests
/// have filled it: a sparse file on ext4 here read at 18.6 µs during the
/// measurement and 75 µs during the validation. `runtime_s` is the time at
/// [`PRECONDITION_BPS`].
pub fn precondition(span: u64) -> Job {
    let runtime_s = span.div_ceil(PRECONDITION_BPS).max(1) as u32;
    Job {
        id: PRECONDITION.into(),
        what: "one sequential write of the whole span (preconditioning)".into(),
        args: format!(
            "--name={PRECONDITION} --direct=1 --ioengine=libaio --rw=write --bs=1M --iodepth=8 --size={span}"
        ),
        runtime_s,
        writes: true,
    }
}

/// Wall seconds the plan takes: runtimes plus fio's start-up and the
/// layout pass (about a second a job on a busy host).
pub fn budget_s(jobs: &[Job]) -> u32 {
    jobs.iter().map(|j| j.runtime_s + 1).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_plan_fits_in_two_minutes_with_validation() {
        let p = plan(true, 256 << 20, true);
        assert!(p.iter().any(|j| j.id == rand_read_id(64)));
        // Every job's options parse as fio options (the simulator runs them).
        for j in &p {
            let args = blklab_fio::split_cmdline(&j.args).unwrap();
            let specs = blklab_fio::parse_cmdline(&args).unwrap();
            assert_eq!(specs.len(), 1, "{}", j.args);
        }
        let ro = plan(true, 256 << 20, false);
        assert!(ro.iter().all(|j| !j.writes));
        assert!(ro.iter().any(|j| j.id == SEQ_READ_BIG));
        assert!(!ro.iter().any(|j| j.id == MIX));
    }

    #[test]
    fn preconditioning_covers_the_span_and_the_jobs_stay_in_it() {
        assert_eq!(span_bytes(false, 4 << 30), 4 << 30);
        assert_eq!(span_bytes(true, 4 << 30), 1 << 30);
        assert_eq!(span_bytes(true, 256 << 20), 256 << 20);
        let p = precondition(256 << 20);
        assert!(p.args.contains("--size=268435456") && p.args.contains("--rw=write"));
        assert!(
            !p.args.contains("time_based"),
            "it ends when the span is written"
        );
        assert_eq!(p.runtime_s, 14, "256 MiB at 20 MB/s");
        let args = blklab_fio::split_cmdline(&p.args).unwrap();
        assert_eq!(blklab_fio::parse_cmdline(&args).unwrap().len(), 1);
        let mut jobs = plan(true, 1 << 30, true);
        limit_to(&mut jobs, 1 << 30);
        assert!(jobs.iter().all(|j| j.args.ends_with(" --size=1073741824")));
    }

    #[test]
    fn big_block_is_bounded_by_the_target() {
        assert_eq!(big_block_bytes(false, 1 << 40), 128 << 20);
        assert_eq!(big_block_bytes(true, 1 << 40), 16 << 20);
        assert_eq!(big_block_bytes(true, 32 << 20), 8 << 20);
        assert_eq!(big_block_bytes(false, 1 << 20), 1 << 20);
    }
}

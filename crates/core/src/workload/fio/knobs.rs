//! The options fio's loop reads on every I/O, copied out of the job's
//! `JobSpec`. Not in fio (its `thread_options` are one struct too, but fio
//! runs one job per process): the simulator's own speed. The spec is 680
//! bytes of mostly cold options, and the dozen the loop needs sat on six
//! of its cache lines; with a thousand jobs every wake-up of a job found
//! them out of the cache. Here they fill one line, next to the loop's own
//! fields (`Job`'s layout). A job's spec never changes after it is built,
//! so the copy cannot go stale; the cold options stay in `Job::cfg`.

use blklab_fio::options::{Engine, RwPattern};
use blklab_fio::{BsSpec, JobSpec};

use crate::block::blk_cgroup::CgId;
use crate::sim::engine::DevId;
use crate::workload::JobConfig;

/// `Job::knobs`: the per-I/O options, each documented on `JobSpec`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Knobs {
    pub number_ios: u64,
    pub thinktime_ns: u64,
    pub thinktime_spin_ns: u64,
    pub thinktime_blocks: u32,
    pub rw_seq_nr: u32,
    pub rwmixread: u32,
    pub iodepth_low: u32,
    pub iodepth_batch_complete_min: u32,
    pub iodepth_batch_complete_max: u32,
    /// The read and write block size when it is `BsSpec::Fixed`, else 0
    /// (a range or a split: `next_buflen` reads the spec).
    pub fixed_bs: [u32; 2],
    pub cgroup: CgId,
    pub dev: DevId,
    pub rw: RwPattern,
    pub ioengine: Engine,
    pub direct: bool,
    pub norandommap: bool,
    /// Not an option: whether the random map's cache hints reach several
    /// I/Os ahead (map_ahead.rs), which pays only with few jobs; set by
    /// `Workload::plan_map_hints` once all jobs are known.
    pub far_map_hints: bool,
}

impl Knobs {
    pub fn of(cfg: &JobConfig) -> Knobs {
        let s: &JobSpec = &cfg.spec;
        let fixed = |b: &BsSpec| match b {
            BsSpec::Fixed(n) => *n,
            _ => 0,
        };
        Knobs {
            number_ios: s.number_ios,
            thinktime_ns: s.thinktime_ns,
            thinktime_spin_ns: s.thinktime_spin_ns,
            thinktime_blocks: s.thinktime_blocks,
            rw_seq_nr: s.rw_seq_nr,
            rwmixread: s.rwmixread,
            iodepth_low: s.iodepth_low,
            iodepth_batch_complete_min: s.iodepth_batch_complete_min,
            iodepth_batch_complete_max: s.iodepth_batch_complete_max,
            fixed_bs: [fixed(&s.bs[0]), fixed(&s.bs[1])],
            cgroup: cfg.cgroup,
            dev: cfg.dev,
            rw: s.rw,
            ioengine: s.ioengine,
            direct: s.direct,
            norandommap: s.norandommap,
            far_map_hints: false,
        }
    }

    /// `JobConfig::uses_pagecache` from the copies.
    pub fn uses_pagecache(&self) -> bool {
        crate::workload::through_pagecache(self.direct, self.ioengine)
    }
}

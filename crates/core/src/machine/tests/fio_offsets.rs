//! fio's choice of offsets (the random map, bsrange, rw_sequencer)
//! through the whole machine: what a job actually issues.

use std::collections::HashSet;

use blklab_fio::options::RwPattern;
use blklab_fio::{BsSpec, JobSpec};

use super::{config, job, nullb_dev};
use crate::machine::Sim;
use crate::sim::trace::Tracer;

const BS: u64 = 4096;

/// A 4k randread job (libaio, QD4) over `blocks` blocks, not time based
/// unless `tweak` says so; returns the (offset, bytes) it issued in order.
fn issued(blocks: u64, tweak: impl FnOnce(&mut JobSpec)) -> Vec<(u64, u32)> {
    let mut s = job("r", RwPattern::RandRead, BS as u32, 4, 1);
    s.time_based = false;
    s.runtime_ns = None;
    s.size = Some(blocks * BS);
    tweak(&mut s);
    let cfg = config(vec![nullb_dev(10_000, 64)], vec![(s, "/")]);
    let mut sim = Sim::new(cfg, Tracer::default()).unwrap();
    let r = sim.run();
    let io = std::mem::take(&mut sim.wl.jobs[0].issued);
    assert_eq!(r.jobs[0].stats.dirs[0].total_ios, io.len() as u64);
    io
}

fn blocks_of(io: &[(u64, u32)]) -> Vec<u64> {
    io.iter().map(|&(o, _)| o / BS).collect()
}

#[test]
fn random_map_visits_every_block_once() {
    // 1000 blocks: the last level-0 word is partial (tail bits)
    let io = issued(1000, |_| {});
    assert_eq!(io.len(), 1000);
    assert!(io.iter().all(|&(_, b)| b as u64 == BS));
    let mut b = blocks_of(&io);
    b.sort_unstable();
    assert_eq!(b, (0..1000).collect::<Vec<_>>());
}

/// The random map's hints reach far ahead in runs of one or two jobs only
/// (map_ahead.rs): with more, a job's next I/Os are too far apart.
#[test]
fn far_map_hints_with_at_most_two_jobs() {
    for n in 1..=3usize {
        let jobs = (0..n)
            .map(|i| {
                (
                    job(&format!("r{i}"), RwPattern::RandRead, BS as u32, 4, 1),
                    "/",
                )
            })
            .collect();
        let sim = Sim::new(config(vec![nullb_dev(10_000, 64)], jobs), Tracer::default()).unwrap();
        assert_eq!(sim.wl.jobs.len(), n);
        assert!(
            sim.wl.jobs.iter().all(|j| j.far_map_hints() == (n <= 2)),
            "{n} jobs"
        );
    }
}

#[test]
fn norandommap_draws_with_replacement() {
    let io = issued(1000, |s| s.norandommap = true);
    // the same bytes, so the same count, but repeats: about 632 distinct
    assert_eq!(io.len(), 1000);
    let distinct: HashSet<u64> = blocks_of(&io).into_iter().collect();
    assert!(distinct.len() < 700, "{}", distinct.len());
}

#[test]
fn time_based_job_resets_the_map_after_each_pass() {
    let io = issued(16, |s| {
        s.time_based = true;
        s.runtime_ns = Some(2_000_000);
    });
    assert!(io.len() > 10 * 16, "{}", io.len());
    let b = blocks_of(&io);
    for pass in b.chunks(16) {
        let mut p = pass.to_vec();
        p.sort_unstable();
        p.dedup();
        assert_eq!(
            p.len(),
            pass.len(),
            "a block repeated within a pass: {pass:?}"
        );
        if pass.len() == 16 {
            assert_eq!(p, (0..16).collect::<Vec<_>>());
        }
    }
    // passes are not all in the same order
    assert_ne!(b[..16], b[16..32]);
}

#[test]
fn rw_seq_runs_follow_a_mapped_random_block() {
    // randread:4: a random block, then three sequential I/Os after it
    // (fio marks only the random ones)
    let io = issued(64, |s| s.rw_seq_nr = 4);
    assert_eq!(io.len(), 64);
    let b = blocks_of(&io);
    let random: Vec<u64> = b.iter().step_by(4).copied().collect();
    let distinct: HashSet<u64> = random.iter().copied().collect();
    assert_eq!(distinct.len(), random.len(), "{random:?}");
    for i in (0..b.len()).filter(|i| i % 4 != 0) {
        assert_eq!(b[i], (b[i - 1] + 1) % 64, "{b:?}");
    }
}

#[test]
fn larger_ios_are_cut_to_the_blocks_they_could_mark() {
    // bssplit 4k/10:16k/90 over 256 blocks: a 16k I/O drawn where some of
    // its blocks were done is shortened, so 8k and 12k I/Os appear, and
    // the pass issues exactly the region's bytes
    let io = issued(256, |s| {
        s.bs[0] = BsSpec::Split(vec![(4096, 10), (16384, 90)])
    });
    let total: u64 = io.iter().map(|&(_, b)| b as u64).sum();
    assert_eq!(total, 256 * BS);
    assert!(io.len() < 256, "{}", io.len());
    assert!(io
        .iter()
        .all(|&(o, b)| (b as u64).is_multiple_of(BS) && o + b as u64 <= 256 * BS));
    assert!(
        io.iter().any(|&(_, b)| b == 8192 || b == 12288),
        "no I/O was shortened"
    );
    // every I/O starts on a block no earlier I/O started on
    let starts: HashSet<u64> = blocks_of(&io).into_iter().collect();
    assert_eq!(starts.len(), io.len());
}

#[test]
fn bsrange_job_covers_the_region_in_one_pass() {
    let io = issued(300, |s| {
        s.bs[0] = BsSpec::Range {
            lo: 4096,
            hi: 32768,
        }
    });
    let total: u64 = io.iter().map(|&(_, b)| b as u64).sum();
    assert_eq!(total, 300 * BS);
    assert!(io.iter().all(|&(o, b)| o + b as u64 <= 300 * BS));
}

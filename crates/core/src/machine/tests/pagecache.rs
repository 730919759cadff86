//! The page cache's writeback timing through the whole machine.

use blklab_fio::options::RwPattern;

use super::{config, job, nullb_dev};
use crate::machine::Sim;

/// Writeback timing through the engine: 1 MiB written buffered (far below
/// the background threshold) stays dirty until the first periodic flusher
/// wake-up at which it is older than dirty_expire (30 s): the wake-ups come
/// every 5 s from t = 5 s and the file was dirtied at t = 0, so the 30 s
/// wake-up writes it, not the 25 s one.
#[test]
fn writeback_waits_for_expiry_then_periodic_wakeup() {
    let mut w = job("w", RwPattern::Write, 65536, 1, 60);
    w.direct = false;
    w.time_based = false;
    w.size = Some(1 << 20);
    // a direct reader keeps the run going, slowly
    let mut r = job("r", RwPattern::RandRead, 4096, 1, 40);
    r.rate_iops = [10, 0, 0];
    r.offset = 1 << 30;
    let cfg = config(vec![nullb_dev(10_000, 64)], vec![(w, "/"), (r, "/")]);
    let mut sim = Sim::new(cfg, crate::sim::trace::Tracer::new(None)).unwrap();
    let writes = |sim: &Sim| -> u64 {
        let l = sim.disk_stat_line(0);
        l.split_whitespace().nth(4).unwrap().parse().unwrap()
    };
    sim.run_until(30 * crate::sim::time::NSEC_PER_SEC - 1);
    assert_eq!(writes(&sim), 0, "nothing written back before expiry");
    sim.run_until(30 * crate::sim::time::NSEC_PER_SEC + 1_000_000);
    // 1 MiB = 256 pages in bios of 256 pages, split at 128 KiB: 8 requests
    assert_eq!(writes(&sim), 8);
    let res = sim.run();
    let pc = res.pagecache.unwrap();
    assert_eq!(pc.write_bios, 1);
    assert_eq!(pc.stats.pgpgout_pages, 256);
}

//! blk-wbt's latency monitor: the verdict on a window of request
//! statistics from blk-stat (`latency_exceeded`, block/blk-wbt.c) and the window length
//! (`rwb_arm_timer`).

use crate::block::blk_stat::RqStat;
use crate::sim::time::Ns;

/// `RWB_WINDOW_NSEC`: the base monitoring window.
pub const WINDOW_NS: Ns = 100_000_000;
/// `RWB_MIN_WRITE_SAMPLES`.
pub const MIN_WRITE_SAMPLES: u64 = 3;
/// `RWB_UNKNOWN_BUMP`.
pub const UNKNOWN_BUMP: u32 = 5;

/// The verdict on a window (`LAT_OK` … `LAT_EXCEEDED`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    Unknown,
    UnknownWrites,
    Exceeded,
}

/// What `latency_exceeded` reads besides the window's statistics.
#[derive(Clone, Copy, Debug)]
pub struct WindowInputs {
    /// Time the oldest tracked read has been at the device, 0 if none
    /// (`rwb_sync_issue_lat`).
    pub sync_issue_lat_ns: u64,
    pub cur_win_ns: u64,
    pub min_lat_ns: u64,
    pub recent_dirty_wait: bool,
    /// Tracked writes in flight (`wbt_inflight`).
    pub inflight: u32,
}

/// Mirrors `latency_exceeded`. `stat[0]` is reads, `stat[1]` writes.
pub fn latency_exceeded(stat: &[RqStat; 2], w: &WindowInputs) -> Verdict {
    let lat = w.sync_issue_lat_ns;
    // A read stuck at the device for a whole window (or past the target in
    // a window without any read completion) counts as a miss by itself.
    if lat > w.cur_win_ns || (lat > w.min_lat_ns && stat[0].nr_samples == 0) {
        return Verdict::Exceeded;
    }
    // Without at least one read and a few writes there is no read/write mix
    // to judge (`stat_sample_valid`).
    if !(stat[0].nr_samples >= 1 && stat[1].nr_samples >= MIN_WRITE_SAMPLES) {
        if stat[1].nr_samples > 0 || w.recent_dirty_wait || w.inflight > 0 {
            return Verdict::UnknownWrites;
        }
        return Verdict::Unknown;
    }
    // The fastest read of the window is too slow: writes are in the way.
    if stat[0].min_ns > w.min_lat_ns {
        return Verdict::Exceeded;
    }
    Verdict::Ok
}

/// The window length for a scale step (`rwb_arm_timer`): the base window
/// shrinks as 1/sqrt(step + 1) while throttled, stays at the base otherwise.
pub fn window_ns(base_ns: u64, scale_step: i32) -> u64 {
    if scale_step > 0 {
        let root = ((scale_step as u64 + 1) << 8).isqrt();
        (base_ns << 4) / root
    } else {
        base_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(samples: &[u64]) -> RqStat {
        let mut s = RqStat::default();
        for &x in samples {
            s.add(x);
        }
        s
    }

    fn inputs() -> WindowInputs {
        WindowInputs {
            sync_issue_lat_ns: 0,
            cur_win_ns: WINDOW_NS,
            min_lat_ns: 2_000_000,
            recent_dirty_wait: false,
            inflight: 0,
        }
    }

    #[test]
    fn verdicts_on_constructed_windows() {
        let w = inputs();
        // the minimum read (1.5 ms) is under the 2 ms target even though the
        // mean is not: OK
        let st = [stat(&[1_500_000, 9_000_000]), stat(&[1, 2, 3])];
        assert_eq!(latency_exceeded(&st, &w), Verdict::Ok);
        // every read slower than the target: EXCEEDED
        let st = [stat(&[2_000_001, 9_000_000]), stat(&[1, 2, 3])];
        assert_eq!(latency_exceeded(&st, &w), Verdict::Exceeded);
        // two writes are not enough to judge; there were writes, so "writes only"
        let st = [stat(&[9_000_000]), stat(&[1, 2])];
        assert_eq!(latency_exceeded(&st, &w), Verdict::UnknownWrites);
        // nothing at all
        let st = [stat(&[]), stat(&[])];
        assert_eq!(latency_exceeded(&st, &w), Verdict::Unknown);
        // nothing completed but tracked writes are in flight
        let w2 = WindowInputs { inflight: 1, ..w };
        assert_eq!(latency_exceeded(&st, &w2), Verdict::UnknownWrites);
        // a read at the device for 3 ms and no read completed: EXCEEDED
        let w3 = WindowInputs {
            sync_issue_lat_ns: 3_000_000,
            ..w
        };
        assert_eq!(latency_exceeded(&st, &w3), Verdict::Exceeded);
        // the same read with another read completing fast: judged on the stats
        let st = [stat(&[100_000]), stat(&[1, 2, 3])];
        assert_eq!(latency_exceeded(&st, &w3), Verdict::Ok);
    }

    #[test]
    fn window_shrinks_with_the_step() {
        assert_eq!(window_ns(WINDOW_NS, 0), WINDOW_NS);
        assert_eq!(window_ns(WINDOW_NS, -3), WINDOW_NS);
        // 100 ms * 16 / isqrt(512) = 1600 ms / 22
        assert_eq!(window_ns(WINDOW_NS, 1), 72_727_272);
        // step 3: isqrt(1024) = 32 -> 50 ms
        assert_eq!(window_ns(WINDOW_NS, 3), 50_000_000);
    }
}

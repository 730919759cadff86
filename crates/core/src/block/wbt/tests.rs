//! blk-wbt through its rq_qos hooks, with constructed bios, requests and
//! completion times.

use super::*;
use crate::block::bio::Origin;
use crate::block::blk_cgroup::CgroupTree;
use crate::block::ioprio::Ioprio;
use crate::block::testutil;
use crate::sim::kerr::Errno;
use crate::sim::switches::Switches;
use crate::sim::trace::Tracer;

const MS: Ns = 1_000_000;

struct Rig {
    wbt: Wbt,
    dev: crate::block::disk::DeviceInfo,
    cg: CgroupTree,
    sw: Switches,
    tr: Tracer,
    now: Ns,
    released: Vec<BioId>,
}

impl Rig {
    fn new(nr_requests: u32, write_cache: bool) -> Rig {
        let dev = crate::block::disk::DeviceInfo {
            nr_requests,
            ..testutil::device("nvme0n1", 259, 0)
        };
        Rig {
            wbt: Wbt::new(
                false,
                nr_requests,
                write_cache,
                WbtSetup::Default,
                false,
                false,
            ),
            dev,
            cg: CgroupTree::new(),
            sw: Switches::default(),
            tr: Tracer::default(),
            now: 0,
            released: Vec::new(),
        }
    }

    fn throttle(&mut self, id: BioId, bio: &mut Bio) -> QosVerdict {
        let mut ctx = testutil::ctx(self.now, &self.dev, &self.cg, &self.sw, &mut self.tr);
        self.wbt.throttle(&mut ctx, id, bio)
    }

    /// A request for `bio`, issued at `issue` and completing now.
    fn done(&mut self, bio: &Bio, issue: Ns) {
        let mut rq = testutil::request(bio.op, 0, Ioprio::default(), bio.sector, 8, 0, issue);
        rq.issue_time = issue;
        rq.wbt_acct = bio.wbt_acct;
        let mut ctx = testutil::ctx(self.now, &self.dev, &self.cg, &self.sw, &mut self.tr);
        self.wbt.issue(&mut ctx, &rq);
        self.wbt.done(&mut ctx, &rq, &mut self.released);
    }

    fn timer_at(&mut self, t: Ns) {
        self.now = t;
        let mut ctx = testutil::ctx(self.now, &self.dev, &self.cg, &self.sw, &mut self.tr);
        self.wbt.timer(&mut ctx, &mut self.released);
    }
}

fn write(sector: u64, background: bool, sync: bool) -> Bio {
    let mut b = Bio::new(0, 0, Op::Write, sector, 4096, Origin::Kernel { tag: 0 });
    b.flags.background = background;
    b.flags.sync = sync;
    b
}

fn read(sector: u64) -> Bio {
    Bio::new(0, 0, Op::Read, sector, 4096, Origin::Kernel { tag: 0 })
}

/// How many bios of this kind get through before the first one has to wait.
fn admitted(r: &mut Rig, mk: impl Fn(u64) -> Bio) -> u32 {
    let mut n = 0;
    loop {
        let mut b = mk(n as u64);
        if r.throttle(n, &mut b) == QosVerdict::Wait {
            return n;
        }
        n += 1;
        assert!(n < 1000);
    }
}

#[test]
fn limits_at_step_0_on_qd_32() {
    // spec §4 (a): background 4, plain buffered writes 8 (4 near reads),
    // REQ_SYNC writeback 16. Past the first 100 ms (the start counts as
    // "recent I/O", as the kernel's init stamps last_issue/last_comp).
    let mut r = Rig::new(32, false);
    r.now = 200 * MS;
    assert_eq!(admitted(&mut r, |s| write(s, true, false)), 4);
    let mut r = Rig::new(32, false);
    r.now = 200 * MS;
    assert_eq!(admitted(&mut r, |s| write(s, false, false)), 8);
    let mut r = Rig::new(32, false);
    r.now = 200 * MS;
    assert_eq!(admitted(&mut r, |s| write(s, false, true)), 16);
    // a read issued 50 ms ago: plain writes drop to the background limit
    let mut r = Rig::new(32, false);
    r.now = 200 * MS;
    let mut rd = read(9999);
    assert_eq!(r.throttle(999, &mut rd), QosVerdict::Proceed);
    r.now = 250 * MS;
    assert_eq!(admitted(&mut r, |s| write(s, false, false)), 4);
    // a dirty-throttled writer within the last second: everyone gets max
    let mut r = Rig::new(32, false);
    r.now = 200 * MS;
    r.wbt.note_dirty_sleep(100 * MS);
    assert_eq!(admitted(&mut r, |s| write(s, true, false)), 16);
}

#[test]
fn odirect_writes_and_reads_pass() {
    let mut r = Rig::new(32, false);
    r.now = 200 * MS;
    for i in 0..100 {
        let mut b = write(i, false, true);
        b.flags.idle = true;
        assert_eq!(r.throttle(i as u32, &mut b), QosVerdict::Proceed);
        assert_eq!(b.wbt_acct, 0);
        let mut rd = read(i);
        assert_eq!(r.throttle(i as u32, &mut rd), QosVerdict::Proceed);
    }
    assert_eq!(r.wbt.inflight(), 0);
}

#[test]
fn scales_down_on_slow_reads_and_up_on_fast_ones() {
    let mut r = Rig::new(64, false);
    r.now = 200 * MS;
    // keep tracked writes in flight so the timer stays armed
    let mut w = write(0, false, true);
    assert_eq!(r.throttle(0, &mut w), QosVerdict::Proceed);
    let mut depths = vec![];
    for _ in 0..6 {
        let end = r.wbt.window_end.expect("armed");
        // one read at 5 ms (target 2 ms) and three writes in the window
        r.now = end - MS;
        let mut rd = read(5);
        r.throttle(100, &mut rd);
        r.done(&rd, r.now - 5 * MS);
        // three write completions (samples only: they were never counted in flight)
        for s in 0..3 {
            r.done(&untracked_write(s), r.now - MS);
        }
        r.timer_at(end);
        depths.push(r.wbt.depth.max_depth);
    }
    // 16 halving per window (1 + 15 >> step), stopping at 1
    assert_eq!(depths, vec![8, 4, 2, 1, 1, 1]);
    assert_eq!(r.wbt.depth.scale_step, 4);
    // the window shrinks with the step: 100 ms * 16 / isqrt(256 * 5)
    assert_eq!(r.wbt.cur_win_ns, 1_600 * MS / 35);
    // now fast reads: back up one step per window
    let mut depths = vec![];
    for _ in 0..4 {
        let end = r.wbt.window_end.expect("armed");
        r.now = end - MS;
        let mut rd = read(5);
        r.throttle(100, &mut rd);
        r.done(&rd, r.now - MS / 2);
        for s in 0..3 {
            r.done(&untracked_write(s), r.now - MS);
        }
        r.timer_at(end);
        depths.push(r.wbt.depth.max_depth);
    }
    assert_eq!(depths, vec![2, 4, 8, 16]);
    assert_eq!(
        r.wbt.lim,
        WbLimits {
            normal: 8,
            background: 4
        }
    );
}

/// A write completion that only feeds the window's statistics.
fn untracked_write(s: u64) -> Bio {
    write(10 + s, false, false)
}

#[test]
fn writes_only_lets_the_step_go_negative_up_to_three_quarters() {
    let mut r = Rig::new(64, false);
    r.now = 200 * MS;
    let mut w = write(0, false, true);
    r.throttle(0, &mut w);
    let mut depths = vec![];
    for _ in 0..4 {
        let end = r.wbt.window_end.expect("armed");
        r.now = end - MS;
        for s in 0..3 {
            r.done(&untracked_write(s), r.now - MS);
        }
        r.timer_at(end);
        depths.push(r.wbt.depth.max_depth);
    }
    // 31, then 61 capped at 48 = 3/4 of 64, then no further
    assert_eq!(depths, vec![31, 48, 48, 48]);
    assert!(r.wbt.depth.scaled_max);
}

#[test]
fn write_cache_releases_sleepers_only_when_drained() {
    for (wc, expect_after_one) in [(false, true), (true, false)] {
        let mut r = Rig::new(32, wc);
        r.now = 200 * MS;
        let mut bios: Vec<Bio> = (0..5).map(|s| write(s, true, false)).collect();
        for (i, b) in bios.iter_mut().enumerate() {
            r.throttle(i as u32, b);
        }
        assert_eq!(r.wbt.inflight(), 4);
        // one completes: 3 left, below the normal limit of 8
        let b0 = bios[0].clone();
        r.done(&b0, r.now - MS);
        assert_eq!(!r.released.is_empty(), expect_after_one, "write cache {wc}");
        if wc {
            for b in bios[1..4].to_vec() {
                r.done(&b, r.now - MS);
            }
            assert_eq!(r.released, vec![4]);
        }
    }
}

#[test]
fn iocost_and_bfq_switch_the_default_off_but_not_a_manual_setting() {
    let off = Wbt::new(false, 64, false, WbtSetup::Default, false, true);
    assert_eq!(off.state, EnableState::OffDefault);
    let mut sw = Switches::default();
    assert_eq!(off.lat_usec_shown(&sw), 0);
    sw.set("wbt.lat_show", "target").unwrap();
    assert_eq!(off.lat_usec_shown(&sw), 2000);
    let off = Wbt::new(true, 64, false, WbtSetup::Default, true, false);
    assert_eq!(off.state, EnableState::OffDefault);
    let mut on = Wbt::new(true, 64, false, WbtSetup::LatUsec(-1), false, true);
    assert_eq!(on.state, EnableState::OnManual);
    assert_eq!(on.lat_usec_shown(&Switches::default()), 75_000);
    on.disable_default();
    assert!(on.enabled());
    let zero = Wbt::new(false, 64, false, WbtSetup::LatUsec(0), false, false);
    assert_eq!(zero.state, EnableState::OffManual);
    assert_eq!(zero.lim, WbLimits::default());
    // a disabled wbt tracks nothing
    let mut r = Rig::new(32, false);
    r.wbt.disable_default();
    r.now = 200 * MS;
    for i in 0..50 {
        let mut b = write(i, true, false);
        assert_eq!(r.throttle(i as u32, &mut b), QosVerdict::Proceed);
    }
    r.wbt.enable_default();
    assert!(r.wbt.enabled());
}

#[test]
fn sysfs_parser_errors() {
    assert_eq!(parse_lat_usec("2000"), Ok(2000));
    assert_eq!(parse_lat_usec("-1\n"), Ok(-1));
    assert_eq!(parse_lat_usec("0"), Ok(0));
    assert_eq!(parse_lat_usec("-2").unwrap_err().errno, Errno::Einval);
    assert_eq!(parse_lat_usec("2ms").unwrap_err().errno, Errno::Einval);
    assert_eq!(parse_lat_usec("").unwrap_err().errno, Errno::Einval);
    assert_eq!(
        parse_lat_usec("99999999999999999999").unwrap_err().errno,
        Errno::Erange
    );
}

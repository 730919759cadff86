//! Accounting over a real capture from this project's lab VM (kernel 6.18):
//! global blk tracer, options blk_cgroup (ids, no cgname), trace_clock=mono,
//! loop0 on a tmpfs file with direct I/O, two v1 blkio cgroups:
//! id 0x29 (41) ran `fio --rw=randread --bs=4k --iodepth=4 --rate_iops=2000
//! --runtime=1`, id 0x3d (61) the same with iodepth=1, rate_iops=500.
//! fio's own JSON said: 2000 and 500 reads, clat mean 67126.6 and 44824.3 ns.

use blklab_host::account::{AccountConfig, Accountant};
use blklab_host::events::{LineParser, Parsed};

#[path = "fixtures/capture_names.rs"]
mod capture_names;
use capture_names::Names;

#[test]
fn real_capture_matches_fio() {
    let text = include_str!("fixtures/blk_loop0_cgid_2fio.txt");
    let mut p = LineParser::new();
    let mut a = Accountant::new(AccountConfig::default());
    for line in text.lines() {
        if let Ok(Parsed::Event(ev)) = p.parse_line(line) {
            a.feed(&ev, &mut Names);
        }
    }
    assert_eq!(p.stats.malformed, 0);
    assert_eq!(p.stats.events, 15000);
    assert_eq!(a.stats.unmatched_complete, 0);
    assert_eq!(a.pending_len(), 0);
    let s = a.snapshot(7 << 20, &[]);
    let get = |n: &str| s.iter().find(|x| x.0 == n).unwrap().1.clone();
    let (ca, cb, par, root) = (
        get("/blklab-host/a"),
        get("/blklab-host/b"),
        get("/blklab-host"),
        get("/"),
    );
    assert_eq!(ca.ios, [2000, 0, 0]);
    assert_eq!(cb.ios, [500, 0, 0]);
    assert_eq!(ca.sectors[0], 2000 * 8);
    assert_eq!(par.ios[0], 2500);
    assert_eq!(root.ios[0], 2500);
    // fio's clat starts when io_submit returned, Q is inside io_submit: on
    // this VM Q2C came out 2-16 % above clat (the submit path is part of it)
    let q2c_a = ca.tms[0] as f64 / 2000.0;
    let q2c_b = cb.tms[0] as f64 / 500.0;
    eprintln!("q2c mean a {q2c_a:.0} ns (fio clat 67127), b {q2c_b:.0} ns (fio clat 44824)");
    assert_eq!(q2c_a.round(), 68324.0);
    assert_eq!(q2c_b.round(), 52024.0);
    assert!((q2c_a / 67127.0 - 1.0).abs() < 0.25, "{q2c_a}");
    assert!((q2c_b / 44824.0 - 1.0).abs() < 0.25, "{q2c_b}");
    assert!(ca.dtms[0] <= ca.tms[0] && ca.dtms[0] > 0);
}

//! The cloud model's mechanisms, one test each.

use super::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

fn spec(iops: u64, bps: u64) -> CloudSpec {
    CloudSpec {
        iops: Some(iops),
        bps: Some(bps),
        latency_ns: Some(0),
        ..CloudSpec::default()
    }
}

/// A closed loop keeping `qd` commands of `bytes` outstanding (as fio with
/// iodepth=qd would) until `until`; returns the sorted completion instants.
fn closed_loop(d: &mut Cloud, qd: usize, bytes: u32, until: Ns) -> Vec<Ns> {
    let mut heap = BinaryHeap::new();
    for i in 0..qd {
        let op = if i % 2 == 0 { Op::Read } else { Op::Write };
        heap.push(Reverse(d.issue(0, op, 0, bytes)));
    }
    let mut done = Vec::new();
    let mut n = 0u64;
    while let Some(Reverse(c)) = heap.pop() {
        if c > until {
            break;
        }
        done.push(c);
        n += 1;
        let op = if n % 2 == 0 { Op::Read } else { Op::Write };
        heap.push(Reverse(d.issue(c, op, 0, bytes)));
    }
    done
}

#[test]
fn saturated_admission_is_exactly_the_provisioned_rate() {
    // 1000 IOPS, 1 ms refill, 10 ms bucket: 10 admitted at 0, then one per ms.
    let mut s = spec(1000, 1 << 40);
    s.bucket_ms = Some(10);
    let mut d = Cloud::new(&s).unwrap();
    for i in 0..10 {
        assert_eq!(d.issue(0, Op::Read, 0, 4096), 0, "request {i}");
    }
    for j in 0..2000u64 {
        assert_eq!(
            d.issue(0, Op::Read, 0, 4096),
            (j + 1) * NSEC_PER_MSEC,
            "request {}",
            10 + j
        );
    }
}

#[test]
fn bandwidth_limit_and_io_units() {
    // 1 MiB counts as 4 IOs of 256 KiB: 400 IOPS allow 100 MiB IOs per second.
    let mut s = spec(400, 1 << 40);
    s.bucket_ms = Some(1);
    let mut d = Cloud::new(&s).unwrap();
    assert_eq!(d.io_units(1 << 20), 4);
    assert_eq!(d.io_units((256 << 10) + 1), 2);
    assert_eq!(d.io_units(0), 1);
    let last = (0..1000)
        .map(|_| d.issue(0, Op::Write, 0, 1 << 20))
        .last()
        .unwrap();
    assert!(
        (9_900 * NSEC_PER_MSEC..=10_010 * NSEC_PER_MSEC).contains(&last),
        "{last}"
    );
    // Bandwidth: 100 MB/s, 1 MB commands: 1000 take ~10 s.
    let mut d = Cloud::new(&spec(1 << 30, 100_000_000)).unwrap();
    let last = (0..1000)
        .map(|_| d.issue(0, Op::Read, 0, 1_000_000))
        .last()
        .unwrap();
    assert!(
        (9_900 * NSEC_PER_MSEC..=10_010 * NSEC_PER_MSEC).contains(&last),
        "{last}"
    );
}

#[test]
fn latency_and_transfer_time() {
    let mut s = spec(1000, 1 << 30);
    s.latency_ns = Some(1_500_000);
    s.xfer_bps = Some(100_000_000);
    let mut d = Cloud::new(&s).unwrap();
    // 1 MB at 100 MB/s: 10 ms transfer.
    assert_eq!(
        d.issue(3, Op::Read, 0, 1_000_000),
        3 + 1_500_000 + 10_000_000
    );
}

#[test]
fn burst_then_provisioned() {
    // 100 IOPS provisioned, 1000 burst, credits for 1 s of full burst: 900 IOs of
    // credit drain at 900/s, so ~1 s at 1000/s, then 100/s.
    let mut s = spec(100, 1 << 40);
    s.burst_iops = Some(1000);
    s.burst_duration_s = Some(1);
    let mut d = Cloud::new(&s).unwrap();
    let done = closed_loop(&mut d, 64, 4096, 4 * NSEC_PER_SEC);
    let count = |a: u64, b: u64| {
        done.iter()
            .filter(|&&c| c >= a * NSEC_PER_MSEC && c < b * NSEC_PER_MSEC)
            .count()
    };
    let first = count(0, 900);
    assert!((890..=960).contains(&first), "first 0.9 s: {first}");
    let late = count(2000, 4000);
    assert!((195..=205).contains(&late), "2..4 s: {late}");
}

#[test]
fn credits_accrue_when_below_provisioned() {
    let mut s = spec(100, 1 << 40);
    s.burst_iops = Some(1000);
    s.burst_duration_s = Some(1);
    s.initial_credit_pct = Some(0);
    let mut d = Cloud::new(&s).unwrap();
    // No credits: 100/s.
    let done = closed_loop(&mut d, 16, 4096, NSEC_PER_SEC);
    assert!(done.len() <= 110, "{}", done.len());
    // Idle for 10 s at 100 IOPS provisioned: credits refill to the cap (900).
    let t0 = 11 * NSEC_PER_SEC;
    let n = (0..2000)
        .map(|_| d.issue(t0, Op::Read, 0, 4096))
        .filter(|&c| c < t0 + 500 * NSEC_PER_MSEC)
        .count();
    assert!((450..=560).contains(&n), "{n}");
}

#[test]
fn azure_p20_saturated_is_bursty_and_at_burst_rate() {
    let mut d = Cloud::new(&CloudSpec {
        preset: Some("azure-p20".into()),
        ..CloudSpec::default()
    })
    .unwrap();
    let end = 11 * NSEC_PER_SEC;
    let done = closed_loop(&mut d, 128, 1 << 20, end);
    // Steady state from 1 s to 11 s.
    let steady: Vec<Ns> = done
        .iter()
        .copied()
        .filter(|&c| c >= NSEC_PER_SEC)
        .collect();
    let mbs = steady.len() as f64 * (1u64 << 20) as f64 / 10.0;
    assert!(
        (mbs - 173_471_131.0).abs() / 173_471_131.0 < 0.01,
        "{mbs} B/s"
    );
    // Tokens come in 20 ms slices: a saturated volume completes one batch per
    // slice and nothing in between (gaps of ~18 ms, one per slice).
    let gaps = steady
        .windows(2)
        .filter(|w| w[1] - w[0] >= 15 * NSEC_PER_MSEC)
        .count();
    assert!((480..=510).contains(&gaps), "{gaps} gaps >= 15 ms in 10 s");
    // More than half of the 8 ms iocost periods (7 ms rounded to 2 jiffies at
    // HZ=250, on the jiffy grid) see no completion at all.
    let period = 8 * NSEC_PER_MSEC;
    let (mut empty, mut total, mut i) = (0, 0, 0);
    let mut p = NSEC_PER_SEC + NSEC_PER_MSEC;
    while p + period <= end {
        while i < steady.len() && steady[i] < p {
            i += 1;
        }
        if i == steady.len() || steady[i] >= p + period {
            empty += 1;
        }
        total += 1;
        p += period;
    }
    assert!(empty * 2 > total, "{empty} empty 8 ms periods of {total}");
}

#[test]
fn throttle_window_stalls_admission() {
    // The preset with 1 ms slices and a 50 ms throttle window: when the head
    // lacks tokens admission stops for 50 ms, then a batch goes.
    let mut s = CloudSpec {
        preset: Some("azure-p20".into()),
        ..CloudSpec::default()
    };
    s.refill_ms = Some(1);
    s.bucket_ms = Some(50);
    s.throttle_window_ms = Some(50);
    let mut d = Cloud::new(&s).unwrap();
    let done = closed_loop(&mut d, 128, 1 << 20, 11 * NSEC_PER_SEC);
    let steady: Vec<Ns> = done
        .iter()
        .copied()
        .filter(|&c| c >= NSEC_PER_SEC)
        .collect();
    let gaps = steady
        .windows(2)
        .filter(|w| w[1] - w[0] >= 40 * NSEC_PER_MSEC)
        .count();
    assert!(gaps >= 180, "{gaps} gaps >= 40 ms in 10 s");
}

#[test]
fn fine_slices_without_window_give_smooth_completions() {
    let mut s = CloudSpec {
        preset: Some("azure-p20".into()),
        ..CloudSpec::default()
    };
    s.refill_ms = Some(1);
    s.bucket_ms = Some(50);
    s.throttle_window_ms = Some(0);
    let mut d = Cloud::new(&s).unwrap();
    let done = closed_loop(&mut d, 128, 1 << 20, 3 * NSEC_PER_SEC);
    let steady: Vec<Ns> = done
        .iter()
        .copied()
        .filter(|&c| c >= NSEC_PER_SEC)
        .collect();
    let max_gap = steady.windows(2).map(|w| w[1] - w[0]).max().unwrap();
    assert!(max_gap <= 8 * NSEC_PER_MSEC, "{max_gap}");
}

#[test]
fn per_direction_lanes_are_independent() {
    let mut s = spec(10, 1 << 40);
    s.per_direction = Some(true);
    s.bucket_ms = Some(100);
    let mut d = Cloud::new(&s).unwrap();
    // One token each; the second read waits 100 ms, a write does not wait for it.
    assert_eq!(d.issue(0, Op::Read, 0, 4096), 0);
    assert_eq!(d.issue(0, Op::Read, 0, 4096), 100 * NSEC_PER_MSEC);
    assert_eq!(d.issue(0, Op::Write, 0, 4096), 0);
}

#[test]
fn preset_values_and_overrides() {
    let p = CloudParams::resolve(&CloudSpec {
        preset: Some("azure-p20".into()),
        throttle_window_ms: Some(100),
        ..CloudSpec::default()
    })
    .unwrap();
    assert_eq!(
        (p.iops, p.burst_iops, p.burst_bps),
        (2343, 3566, 173_471_131)
    );
    assert_eq!(p.throttle_window_ms, 100);
    assert_eq!(p.queue_depth, 256);
}

#[test]
fn errors_name_the_parameter() {
    let e = |s: CloudSpec| Cloud::new(&s).err().unwrap();
    assert!(e(CloudSpec {
        preset: Some("azure-p99".into()),
        ..CloudSpec::default()
    })
    .contains("azure-p20"));
    assert!(e(CloudSpec {
        bps: Some(1),
        ..CloudSpec::default()
    })
    .contains("iops"));
    assert!(e(CloudSpec {
        iops: Some(1),
        ..CloudSpec::default()
    })
    .contains("bps"));
    let mut s = spec(100, 100);
    s.burst_iops = Some(50);
    assert!(e(s).contains("burst_iops"));
    let mut s = spec(100, 100);
    s.refill_ms = Some(0);
    assert!(e(s).contains("refill_ms"));
    let mut s = spec(100, 100);
    s.io_unit_kb = Some(0);
    assert!(e(s).contains("io_unit_kb"));
    let mut s = spec(100, 100);
    s.initial_credit_pct = Some(101);
    assert!(e(s).contains("initial_credit_pct"));
}

fn closed_loop_reads(d: &mut Cloud, qd: usize, bytes: u32, until: Ns) -> Vec<Ns> {
    let mut heap = BinaryHeap::new();
    for _ in 0..qd {
        heap.push(Reverse(d.issue(0, Op::Read, 0, bytes)));
    }
    let mut done = Vec::new();
    while let Some(Reverse(c)) = heap.pop() {
        if c > until {
            break;
        }
        done.push(c);
        heap.push(Reverse(d.issue(c, Op::Read, 0, bytes)));
    }
    done
}

fn count(done: &[Ns], from_ms: u64, to_ms: u64) -> usize {
    done.iter()
        .filter(|&&c| c >= from_ms * NSEC_PER_MSEC && c < to_ms * NSEC_PER_MSEC)
        .count()
}

#[test]
fn stated_credit_bucket_refills_at_baseline_and_drains_above_it() {
    // gp2 style, scaled: baseline 300 IOPS, burst 3000, a bucket of 2700 I/O
    // credits: bursting drains 2700/s, so it lasts 1 s, then 300/s (plus the
    // 50 ms token bucket full at the start: 150).
    let mut s = spec(300, 1 << 40);
    s.burst_iops = Some(3000);
    s.burst_credit_ios = Some(2700);
    let mut d = Cloud::new(&s).unwrap();
    let done = closed_loop_reads(&mut d, 32, 4096, 6 * NSEC_PER_SEC);
    let first = count(&done, 0, 900);
    assert!((2780..=2900).contains(&first), "first 0.9 s: {first}");
    let late = count(&done, 2000, 4000);
    assert!((590..=610).contains(&late), "2..4 s: {late}");
    // Idle for 9 s below the baseline: the bucket refills at 300/s to its cap.
    let t0 = 15 * NSEC_PER_SEC;
    let n = (0..4000)
        .map(|_| d.issue(t0, Op::Read, 0, 4096))
        .filter(|&c| c < t0 + 500 * NSEC_PER_MSEC)
        .count();
    // 0.5 s at 3000/s plus the 50 ms token bucket.
    assert!(
        (1580..=1700).contains(&n),
        "{n} in 0.5 s at burst after refilling"
    );
}

#[test]
fn vm_caps_are_a_second_bucket_in_series() {
    // A disk good for 10 000 IOPS on a VM capped at 2000: 2000.
    let mut s = spec(10_000, 1 << 40);
    s.vm_iops = Some(2000);
    s.vm_bps = Some(1 << 40);
    let mut d = Cloud::new(&s).unwrap();
    let done = closed_loop_reads(&mut d, 64, 4096, 3 * NSEC_PER_SEC);
    let n = count(&done, 1000, 3000);
    assert!((3950..=4050).contains(&n), "{n} in 2 s");
    // The VM's bandwidth cap binds for large IOs: 100 MB/s, 1 MB IOs -> 100/s.
    let mut s = spec(10_000, 1 << 40);
    s.io_unit_kb = Some(1024);
    s.vm_iops = Some(100_000);
    s.vm_bps = Some(100_000_000);
    let mut d = Cloud::new(&s).unwrap();
    let done = closed_loop_reads(&mut d, 16, 1_000_000, 3 * NSEC_PER_SEC);
    let n = count(&done, 1000, 3000);
    assert!((195..=205).contains(&n), "{n} in 2 s");
}

#[test]
fn named_vm_bursts_then_holds_its_cap() {
    let s = CloudSpec {
        preset: Some("aws-gp3".into()),
        iops: Some(16_000),
        vm: Some("Standard_D8as_v5".into()),
        latency_ns: Some(0),
        ..CloudSpec::default()
    };
    let p = CloudParams::resolve(&s).unwrap();
    let v = p.vm.clone().unwrap();
    assert_eq!((v.iops, v.burst_iops), (12_800, 20_000));
    let mut d = Cloud::new(&s).unwrap();
    // Bursting at 20 000 would exceed the disk's 16 000: the disk binds.
    let done = closed_loop_reads(&mut d, 64, 4096, 2 * NSEC_PER_SEC);
    let n = count(&done, 1000, 2000);
    assert!((15_800..=16_200).contains(&n), "{n} in 1 s");
    assert!(d.describe().contains("vm=Standard_D8as_v5"));
}

#[test]
fn every_preset_resolves_with_its_published_figures() {
    for p in presets::PRESETS {
        let mut s = CloudSpec {
            preset: Some(p.name.into()),
            ..CloudSpec::default()
        };
        if CloudParams::resolve(&s).is_err() {
            // Provisioned-only volumes need their numbers.
            s.iops = Some(20_000);
            s.bps = Some(500_000_000);
        }
        let r = CloudParams::resolve(&s).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        assert!(r.burst_iops >= r.iops, "{}", p.name);
        Cloud::new(&s).unwrap();
    }
    let r = |name: &str, size: Option<u64>| {
        CloudParams::resolve(&CloudSpec {
            preset: Some(name.into()),
            size_gib: size,
            ..CloudSpec::default()
        })
    };
    let gp3 = r("aws-gp3", None).unwrap();
    assert_eq!((gp3.iops, gp3.bps, gp3.burst_iops), (3000, 125 << 20, 3000));
    let gp2 = r("aws-gp2", Some(100)).unwrap();
    assert_eq!(
        (gp2.iops, gp2.burst_iops, gp2.burst_credit_ios),
        (300, 3000, Some(5_400_000))
    );
    assert_eq!(gp2.bps, 128 << 20);
    let small = r("aws-gp2", Some(10)).unwrap();
    assert_eq!(small.iops, 100);
    let big = r("aws-gp2", Some(2000)).unwrap();
    assert_eq!((big.iops, big.burst_iops, big.bps), (6000, 6000, 250 << 20));
    let pd = r("gcp-pd-balanced", Some(100)).unwrap();
    assert_eq!(pd.iops, 3600);
    assert_eq!(pd.bps, 168 << 20);
    let p10 = r("azure-p10", None).unwrap();
    assert_eq!(
        (p10.iops, p10.bps, p10.burst_iops, p10.burst_bps),
        (500, 100_000_000, 3500, 170_000_000)
    );
    let p30 = r("azure-p30", None).unwrap();
    assert_eq!((p30.iops, p30.burst_iops), (5000, 5000));
    // io2: throughput follows the provisioned IOPS.
    let io2 = CloudParams::resolve(&CloudSpec {
        preset: Some("aws-io2".into()),
        iops: Some(10_000),
        ..CloudSpec::default()
    })
    .unwrap();
    assert_eq!(io2.bps, 10_000 * 268_435);
    assert!(r("aws-io2", None).unwrap_err().contains("needs iops"));
    assert!(r("azure-ultra", None).unwrap_err().contains("needs iops"));
    assert!(r("aws-gp2", Some(0)).unwrap_err().contains("size_gib"));
    let t = presets::table();
    for p in presets::PRESETS {
        assert!(t.contains(p.name), "{}", p.name);
    }
    assert!(t.contains("Standard_D8as_v5") && t.contains("m5.large"));
}

#[test]
fn vm_errors_name_the_key() {
    let e = Cloud::new(&CloudSpec {
        preset: Some("aws-gp3".into()),
        vm: Some("Standard_Z9".into()),
        ..CloudSpec::default()
    })
    .err()
    .unwrap();
    assert!(
        e.contains("Standard_Z9") && e.contains("Standard_D8as_v5"),
        "{e}"
    );
    let e = Cloud::new(&CloudSpec {
        preset: Some("aws-gp3".into()),
        vm_iops: Some(100),
        ..CloudSpec::default()
    })
    .err()
    .unwrap();
    assert!(e.contains("vm_bps"), "{e}");
}

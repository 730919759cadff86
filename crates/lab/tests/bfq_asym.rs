//! Yu Kuai's 2021 "consider request size in bfq_asymmetric_scenario()"
//! (switch `bfq.asym_request_size`) end to end: its throughput curve over
//! the number of equal-weight cgroups, one psync 4k random reader each,
//! built from examples/bfq-asym-request-size.toml.

use std::path::Path;

use blklab_lab::report::Row;
use blklab_lab::runner;
use blklab_lab::scenario::Scenario;

/// The example with `n` cgroups of one reader each instead of four.
fn readers(n: usize) -> Scenario {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/bfq-asym-request-size.toml");
    let text = std::fs::read_to_string(&p).unwrap();
    let mut t = text[..text.find("[cgroup.\"/g1\"]").unwrap()].to_string();
    for i in 1..=n {
        t += &format!("[cgroup.\"/g{i}\"]\n\"io.bfq.weight\" = \"default 100\"\n");
    }
    for i in 1..=n {
        t += &format!(
            "\n[[job]]\nlabel = \"g{i}\"\ncgroup = \"/g{i}\"\ncmdline = \"--name=g{i} --filename=/dev/nvme1n1 --direct=1 --rw=randread --bs=4k --ioengine=psync --runtime=3 --time_based\"\n"
        );
    }
    Scenario::parse(&t, Path::new("bfq-asym-readers.toml")).unwrap_or_else(|e| panic!("{e}"))
}

/// Total IOPS of the `n` readers with the switch at `value`.
fn total(n: usize, value: &str) -> f64 {
    let sc = readers(n);
    let mut cfg = sc.config.clone();
    cfg.switches.set("bfq.asym_request_size", value).unwrap();
    let out = runner::run(&sc, &cfg, None).unwrap();
    out.groups.iter().map(|g| Row::from_group(g).iops).sum()
}

#[test]
fn without_the_patch_the_total_is_one_readers_rate_with_it_it_grows_with_the_cgroups() {
    // the patch's table: 33.8 MiB/s for 1-8 cgroups before; after, 65.4 /
    // 106.8 / 126.4 MiB/s for 2 / 4 / 8 (x1.93, x3.16, x3.74). The model:
    // off 179.4-179.6 MiB/s at 1, 2, 4 and 8; on x1.66, x2.97, x3.62.
    let one = total(1, "off");
    assert!(
        (total(1, "on") - one).abs() < 1e-9 * one,
        "one cgroup is never asymmetric"
    );
    let mut last = 1.0;
    for (n, lo, hi) in [(2, 1.4, 2.0), (8, 3.0, 4.5)] {
        let off = total(n, "off");
        // two or more groups with pending requests: bfq idles for each
        // reader in turn, so only one request is ever on the device
        assert!(
            (off / one - 1.0).abs() < 0.02,
            "{n} cgroups off: {off} vs one reader {one}"
        );
        let gain = total(n, "on") / off;
        assert!(
            gain > lo && gain < hi && gain > last,
            "{n} cgroups: on/off {gain:.2}"
        );
        last = gain;
    }
}

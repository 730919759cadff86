//! Cloud volume presets: each provider's published per-volume limits as a
//! `CloudSpec` that the scenario's own keys override, and VM-level caps (the
//! second bucket every disk of a VM shares). Sources, by documentation page
//! title, and the figures taken from them are in docs/presets.md.
//!
//! What is published: provisioned IOPS and throughput, burst rates and the
//! credit bucket, how IO size counts against IOPS. What is not, and is
//! inferred here (and marked so in the table): the token grant timing and
//! the base latency. The `azure-p*` presets reuse azure-p20's timing, which
//! is calibrated to a measured P20 (docs/fidelity/iocost.md).

use std::fmt::Write as _;

use super::CloudSpec;

/// MB/s as providers write it for Azure (10^6 bytes per second).
const MB: u64 = 1_000_000;
/// MiB/s as AWS and GCP write it.
const MIB: u64 = 1 << 20;

/// One preset.
pub struct Preset {
    pub name: &'static str,
    /// The product, as the provider names it.
    pub volume: &'static str,
    /// Whether `size_gib` changes the figures (and its default).
    pub default_size_gib: Option<u64>,
    /// The published figures in words (for `blklab presets`).
    pub figures: &'static str,
    build: fn(size_gib: u64) -> CloudSpec,
}

impl Preset {
    /// The preset's spec for a volume of `size_gib` (ignored when the preset
    /// does not depend on size).
    pub fn spec(&self, size_gib: Option<u64>) -> CloudSpec {
        (self.build)(size_gib.or(self.default_size_gib).unwrap_or(0))
    }
}

/// Timing shared by the presets whose provider publishes none: tokens in
/// 20 ms grants with one grant of carry-over (azure-p20's calibration), no
/// throttle window, 256 KiB IO unit (AWS and Azure count larger IOs as
/// several), queue depth 256.
fn base(iops: u64, bps: u64, latency_ns: u64) -> CloudSpec {
    CloudSpec {
        iops: Some(iops),
        bps: Some(bps),
        // No burst rates: they default to the provisioned ones, so a user's
        // `iops`/`bps` raise them too.
        burst_duration_s: Some(1800),
        initial_credit_pct: Some(100),
        per_direction: Some(false),
        io_unit_kb: Some(256),
        refill_ms: Some(20),
        bucket_ms: Some(20),
        throttle_window_ms: Some(0),
        latency_ns: Some(latency_ns),
        xfer_bps: Some(0),
        queue_depth: Some(256),
        ..CloudSpec::default()
    }
}

fn burst(mut s: CloudSpec, iops: u64, bps: u64) -> CloudSpec {
    s.burst_iops = Some(iops.max(s.iops.unwrap_or(0)));
    s.burst_bps = Some(bps.max(s.bps.unwrap_or(0)));
    s
}

/// Azure Premium SSD with credit-based bursting (P20 and smaller): 3500 IOPS,
/// 170 MB/s for 30 minutes from a full bucket.
fn azure_p_burst(iops: u64, mbps: u64) -> CloudSpec {
    burst(base(iops, mbps * MB, 1_800_000), 3500, 170 * MB)
}

fn aws_gp2(size_gib: u64) -> CloudSpec {
    // 3 IOPS per GiB, at least 100, at most 16 000; bursts to 3000 from a
    // 5.4 M I/O credit bucket that fills at the baseline.
    let baseline = (3 * size_gib).clamp(100, 16_000);
    let mibs = if size_gib <= 170 { 128 } else { 250 };
    let mut s = burst(base(baseline, mibs * MIB, 1_000_000), 3000, mibs * MIB);
    s.burst_credit_ios = Some(5_400_000);
    s
}

fn aws_io2(_: u64) -> CloudSpec {
    // io2 needs provisioned IOPS; throughput 0.256 MiB/s per IOPS (see
    // CloudParams::resolve) up to 4000 MiB/s.
    let mut s = base(3000, 768 * MIB, 500_000);
    (s.iops, s.bps) = (None, None);
    s
}

fn gcp_pd(
    size_gib: u64,
    base_iops: u64,
    iops_gib: u64,
    base_mibs: f64,
    mibs_gib: f64,
    max_iops: u64,
) -> CloudSpec {
    let iops = (base_iops + iops_gib * size_gib).min(max_iops);
    let bps = ((base_mibs + mibs_gib * size_gib as f64).min(1200.0) * MIB as f64) as u64;
    base(iops, bps, 1_000_000)
}

pub const PRESETS: &[Preset] = &[
    Preset {
        name: "aws-gp3",
        volume: "AWS EBS gp3",
        default_size_gib: None,
        figures: "3000 IOPS, 125 MiB/s baseline; provision iops (3000-16000) and bps (125-1000 MiB/s); no bursting",
        build: |_| base(3000, 125 * MIB, 1_000_000),
    },
    Preset {
        name: "aws-gp2",
        volume: "AWS EBS gp2",
        default_size_gib: Some(100),
        figures: "3 IOPS/GiB (100..16000), burst 3000 IOPS from 5.4 M I/O credits; 128 MiB/s (<=170 GiB) or 250 MiB/s",
        build: aws_gp2,
    },
    Preset {
        name: "aws-io2",
        volume: "AWS EBS io2 Block Express",
        default_size_gib: None,
        figures: "provisioned iops (100-256000, required); 0.256 MiB/s per IOPS up to 4000 MiB/s; sub-ms",
        build: aws_io2,
    },
    Preset {
        name: "gcp-pd-balanced",
        volume: "GCP Balanced Persistent Disk",
        default_size_gib: Some(100),
        figures: "3000 IOPS + 6/GiB, 140 MiB/s + 0.28 MiB/s per GiB (to 80000 IOPS, 1200 MiB/s)",
        build: |g| gcp_pd(g, 3000, 6, 140.0, 0.28, 80_000),
    },
    Preset {
        name: "gcp-pd-ssd",
        volume: "GCP SSD Persistent Disk",
        default_size_gib: Some(100),
        figures: "6000 IOPS + 30/GiB, 240 MiB/s + 0.48 MiB/s per GiB (to 100000 IOPS, 1200 MiB/s)",
        build: |g| gcp_pd(g, 6000, 30, 240.0, 0.48, 100_000),
    },
    Preset {
        name: "gcp-hyperdisk-balanced",
        volume: "GCP Hyperdisk Balanced",
        default_size_gib: None,
        figures: "3000 IOPS, 140 MiB/s baseline; provision iops (to 160000) and bps (to 2400 MiB/s)",
        build: |_| base(3000, 140 * MIB, 1_000_000),
    },
    Preset {
        name: "azure-p10",
        volume: "Azure Premium SSD P10 (128 GiB)",
        default_size_gib: None,
        figures: "500 IOPS, 100 MB/s; credit bursting to 3500 IOPS, 170 MB/s for 30 min",
        build: |_| azure_p_burst(500, 100),
    },
    Preset {
        name: "azure-p15",
        volume: "Azure Premium SSD P15 (256 GiB)",
        default_size_gib: None,
        figures: "1100 IOPS, 125 MB/s; credit bursting to 3500 IOPS, 170 MB/s for 30 min",
        build: |_| azure_p_burst(1100, 125),
    },
    Preset {
        name: "azure-p20",
        volume: "Azure Premium SSD P20 (512 GiB), measured",
        default_size_gib: None,
        figures: "2300 IOPS, 150 MB/s; bursting to 3500, 170 MB/s (here 2 % above: the seed's measured disk)",
        build: |_| super::azure_p20(),
    },
    Preset {
        name: "azure-p30",
        volume: "Azure Premium SSD P30 (1 TiB)",
        default_size_gib: None,
        figures: "5000 IOPS, 200 MB/s; no credit bursting (on-demand bursting is opt-in, not modelled)",
        build: |_| base(5000, 200 * MB, 1_800_000),
    },
    Preset {
        name: "azure-p40",
        volume: "Azure Premium SSD P40 (2 TiB)",
        default_size_gib: None,
        figures: "7500 IOPS, 250 MB/s; no credit bursting",
        build: |_| base(7500, 250 * MB, 1_800_000),
    },
    Preset {
        name: "azure-p50",
        volume: "Azure Premium SSD P50 (4 TiB)",
        default_size_gib: None,
        figures: "7500 IOPS, 250 MB/s; no credit bursting",
        build: |_| base(7500, 250 * MB, 1_800_000),
    },
    Preset {
        name: "azure-premium-v2",
        volume: "Azure Premium SSD v2",
        default_size_gib: None,
        figures: "3000 IOPS, 125 MB/s baseline; provision iops (to 80000) and bps (to 1200 MB/s); sub-ms",
        build: |_| base(3000, 125 * MB, 500_000),
    },
    Preset {
        name: "azure-ultra",
        volume: "Azure Ultra Disk",
        default_size_gib: None,
        figures: "provisioned iops and bps (required; to 400000 IOPS, 10000 MB/s); sub-ms",
        build: |_| {
            let mut s = base(1, 1, 500_000);
            (s.iops, s.bps) = (None, None);
            s
        },
    },
];

/// A VM size's disk caps: (uncached IOPS, bytes/s, burst IOPS, burst bytes/s).
pub struct VmCaps {
    pub name: &'static str,
    pub iops: u64,
    pub bps: u64,
    pub burst_iops: u64,
    pub burst_bps: u64,
}

const fn vm(name: &'static str, iops: u64, bps: u64, burst_iops: u64, burst_bps: u64) -> VmCaps {
    VmCaps {
        name,
        iops,
        bps,
        burst_iops,
        burst_bps,
    }
}

/// Azure: max uncached disk IOPS / MBps and burst (30 min of credits).
/// AWS: EBS-optimized baseline / maximum IOPS and Mbps / 8 (burst 30 min).
pub const VMS: &[VmCaps] = &[
    vm("Standard_D2as_v5", 3750, 82 * MB, 10_000, 600 * MB),
    vm("Standard_D4as_v5", 6400, 144 * MB, 20_000, 600 * MB),
    vm("Standard_D8as_v5", 12_800, 200 * MB, 20_000, 600 * MB),
    vm("Standard_D16as_v5", 25_600, 384 * MB, 40_000, 800 * MB),
    vm("Standard_D2s_v5", 3750, 85 * MB, 10_000, 1200 * MB),
    vm("Standard_D4s_v5", 6400, 145 * MB, 20_000, 1200 * MB),
    vm("Standard_D8s_v5", 12_800, 290 * MB, 20_000, 1200 * MB),
    vm("Standard_D16s_v5", 25_600, 600 * MB, 40_000, 1200 * MB),
    vm("m5.large", 3600, 81_250_000, 18_750, 593_750_000),
    vm("m5.xlarge", 6000, 143_750_000, 18_750, 593_750_000),
    vm("m5.2xlarge", 12_000, 287_500_000, 18_750, 593_750_000),
    vm("m5.4xlarge", 18_750, 593_750_000, 18_750, 593_750_000),
];

pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

pub fn find_vm(name: &str) -> Option<&'static VmCaps> {
    VMS.iter().find(|v| v.name == name)
}

pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}

fn rate(bps: Option<u64>) -> String {
    bps.map(|b| format!("{:.1}", b as f64 / 1e6))
        .unwrap_or_else(|| "set".into())
}

/// `blklab presets`: every preset with its resolved figures, then the VM caps.
pub fn table() -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<24} {:>8} {:>9} {:>8} {:>9} {:>9} {:>8}  published figures (docs/presets.md)",
        "preset", "IOPS", "MB/s", "burst", "burst", "credits", "lat ms"
    );
    let _ = writeln!(
        s,
        "{:<24} {:>8} {:>9} {:>8} {:>9} {:>9}",
        "", "", "", "IOPS", "MB/s", ""
    );
    for p in PRESETS {
        let c = p.spec(None);
        let opt = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_else(|| "set".into());
        let credits = match (c.burst_credit_ios, c.burst_iops, c.iops) {
            (Some(n), _, _) => format!("{:.1}M IO", n as f64 / 1e6),
            (None, Some(b), Some(i)) if b > i => {
                format!("{} min", c.burst_duration_s.unwrap_or(1800) / 60)
            }
            _ => "-".into(),
        };
        let size = p
            .default_size_gib
            .map(|g| format!(" [size_gib={g}]"))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "{:<24} {:>8} {:>9} {:>8} {:>9} {:>9} {:>8.2}  {}: {}{size}",
            p.name,
            opt(c.iops),
            rate(c.bps),
            opt(c.burst_iops.or(c.iops)),
            rate(c.burst_bps.or(c.bps)),
            credits,
            c.latency_ns.unwrap_or(0) as f64 / 1e6,
            p.volume,
            p.figures
        );
    }
    let _ = writeln!(
        s,
        "\nVM-level caps (vm = \"NAME\": a second bucket shared by the VM's disks)"
    );
    let _ = writeln!(
        s,
        "{:<24} {:>8} {:>9} {:>8} {:>9}",
        "vm", "IOPS", "MB/s", "burst", "burst MB/s"
    );
    for v in VMS {
        let _ = writeln!(
            s,
            "{:<24} {:>8} {:>9.1} {:>8} {:>9.1}",
            v.name,
            v.iops,
            v.bps as f64 / 1e6,
            v.burst_iops,
            v.burst_bps as f64 / 1e6
        );
    }
    let _ = writeln!(s, "\nsize_gib changes size-dependent presets; iops, bps, burst_* and any other key override a preset; lat = base latency (inferred, not published)");
    s
}

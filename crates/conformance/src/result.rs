//! What the harness is asked to do and what it reports per case: the types
//! the runner (lib.rs) produces and the renderer prints.

use crate::cases::Case;
use crate::loop_device::RawSpeed;
use crate::metrics::Metrics;
pub use crate::share::RealSide;

#[derive(Debug, Clone)]
pub struct Options {
    /// Case names (or prefixes ending in `*`); empty = all.
    pub cases: Vec<String>,
    pub repeat: u32,
    pub quick: bool,
    /// Skip the real kernel (simulator only).
    pub sim_only: bool,
    /// The machine the real side runs on (what some tolerances depend on).
    pub real_side: RealSide,
    /// How the simulator expresses the host: `[host] cpus` (`--sim-cpus`;
    /// 0 = the free host), the capped disk and the loop device.
    pub sim: crate::sim::SimChoices,
    /// Where to leave every file a QEMU guest sent back for each case
    /// (`--guest-files DIR`: DIR/KERNEL/CASE/FILE), for reading the raw
    /// traces; `None` keeps nothing.
    pub guest_files: Option<std::path::PathBuf>,
}

/// A case's outcome.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// Ran; every judged metric within tolerance.
    Pass,
    /// Ran; some judged metric out of tolerance (the list says which).
    Fail(Vec<String>),
    /// The host lacks what the case needs (the reason).
    NotRunnable(String),
    /// The real side was skipped on request (--sim-only).
    SimOnly,
    /// Setup or fio failed.
    Error(String),
    /// Ran, and some judged metric is out of tolerance (`bad`), but every
    /// real run saw this host stall (`why`, blklab_host::stall): the real
    /// figures show the stall, so the case is not judged here.
    HostStalled { why: String, bad: Vec<String> },
}

impl Status {
    pub fn word(&self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail(_) => "FAIL",
            Status::NotRunnable(_) => "NOT RUNNABLE HERE",
            Status::SimOnly => "SIM ONLY",
            Status::Error(_) => "ERROR",
            Status::HostStalled { .. } => "NOT JUDGED (HOST STALLED)",
        }
    }
}

/// One job of a case: the real median (with the runs' spread) and the simulator.
#[derive(Debug, Clone)]
pub struct JobResult {
    pub label: String,
    pub real: Option<Metrics>,
    /// (max - min) / median of each metric over the real runs.
    pub spread: Option<[f64; 8]>,
    pub runs: usize,
    pub sim: Option<Metrics>,
}

#[derive(Debug, Clone)]
pub struct CaseResult {
    pub case: Case,
    pub status: Status,
    pub jobs: Vec<JobResult>,
    pub device: Option<String>,
    pub notes: Vec<String>,
    pub runtime_s: u32,
    /// The loop device speed the simulated device was given.
    pub raw: RawSpeed,
    /// iocost's QoS loop on both sides, for cases that trace it.
    pub qos: Option<crate::qos_loop::QosLoop>,
    /// The share of one group's I/Os on both sides, for cases that judge it.
    pub share: Option<crate::share::ShareResult>,
    /// Why the real figures are from stalled runs only (None: at least one
    /// real run was free of host stalls, or there is no real side).
    pub stalled: Option<String>,
}

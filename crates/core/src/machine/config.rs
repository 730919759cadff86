//! What a run is given (devices, cgroups, jobs, timed writes) and what it
//! returns.

use blklab_fio::JobStats;

use crate::block::blk_cgroup::{CgId, CgroupTree};
use crate::drivers::{DeviceInfo, ModelSpec};
use crate::sim::cpu::CpuCosts;
use crate::sim::switches::Switches;
use crate::sim::time::{Hz, Ns};
use crate::workload::JobConfig;

/// One device of a scenario.
#[derive(Clone, Debug)]
pub struct DeviceConfig {
    pub info: DeviceInfo,
    pub model: ModelSpec,
    /// /sys/block/DEV/queue/scheduler
    pub scheduler: String,
    /// /sys/block/DEV/queue/iosched/* writes, in order.
    pub iosched: Vec<(String, String)>,
    /// blk-wbt on this device, None = no wbt (as with CONFIG_BLK_WBT_MQ=n;
    /// what every scenario got before wbt was modelled).
    pub wbt: Option<WbtConfig>,
    /// CPU time a submit call spends waking the driver's idle worker thread
    /// when it dispatches to the device while nothing is in flight there
    /// (a threaded driver such as loop; 0 for drivers that issue inline).
    /// See `BlockLayer::submit_cpu_ns`.
    pub idle_wake_ns: Ns,
}

/// A device's writeback throttling set-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WbtConfig {
    pub setup: crate::block::wbt::WbtSetup,
    /// /sys/block/DEV/queue/write_cache is "write back" (QUEUE_FLAG_WC);
    /// in the model only wbt's wake-up rule reads it.
    pub write_cache: bool,
}

/// A write to a cgroup file at a simulated instant.
#[derive(Clone, Debug)]
pub struct TimedWrite {
    pub at: Ns,
    pub cgroup: CgId,
    pub file: String,
    pub value: String,
}

#[derive(Clone, Debug)]
pub struct SimConfig {
    pub seed: u64,
    pub hz: Hz,
    pub switches: Switches,
    pub cgroups: CgroupTree,
    pub devices: Vec<DeviceConfig>,
    pub jobs: Vec<JobConfig>,
    pub cpu: CpuCosts,
    /// Stop the whole run at this instant even if jobs are still running.
    pub time_limit: Option<Ns>,
    pub writes: Vec<TimedWrite>,
    /// The page cache (`[pagecache]`), used by jobs with direct=0 or ioengine=mmap.
    pub pagecache: crate::mm::PageCacheParams,
}

/// Why a scenario could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("device {dev}: {msg}")]
    Device { dev: String, msg: String },
    #[error("cgroup {cgroup}: {file}: {}", crate::sim::kerr::without_file_prefix(.file, .msg))]
    Cgroup {
        cgroup: String,
        file: String,
        msg: String,
    },
    #[error("job {job}: {msg}")]
    Job { job: String, msg: String },
    /// `[host]`: e.g. a scheduler feature the run's `sched.fair` model
    /// does not mirror.
    #[error("host: {msg}")]
    Host { msg: String },
}

/// What a run produced.
#[derive(Debug)]
pub struct RunResult {
    /// Per job instance, in configuration order.
    pub jobs: Vec<JobResult>,
    pub end_time: Ns,
    pub events: u64,
    pub bios_completed: u64,
    /// The most bios in flight at once (memory follows this, not the run length).
    pub peak_bios_in_flight: usize,
    pub devices: Vec<DeviceResult>,
    /// Page-cache figures, when the page cache was used.
    pub pagecache: Option<crate::mm::pcsys::PcReport>,
}

#[derive(Debug)]
pub struct JobResult {
    pub name: String,
    /// When the job's loop ended (ns).
    pub end_ns: Ns,
    pub clone: u32,
    pub groupid: u32,
    pub cgroup: String,
    pub device: String,
    pub stats: JobStats,
}

#[derive(Debug)]
pub struct DeviceResult {
    pub name: String,
    /// /sys/block/DEV/stat's first 11 fields at the end of the run.
    pub stat: [u64; 11],
    pub requests: u64,
    pub bios: u64,
    /// blk-wbt's state and counters at the end, if the device has wbt.
    pub wbt: Option<String>,
}

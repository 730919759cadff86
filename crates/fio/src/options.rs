//! Typed fio job options (what `fio` derives from a job file or command line).
//!
//! Values are already in simulator units: sizes in bytes, times in nanoseconds.
//! The parser lives in `parse/`; this module is only the data model.

/// fio's data directions (`enum fio_ddir`: DDIR_READ, DDIR_WRITE, DDIR_TRIM).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ddir {
    Read = 0,
    Write = 1,
    Trim = 2,
}

impl Ddir {
    pub const ALL: [Ddir; 3] = [Ddir::Read, Ddir::Write, Ddir::Trim];
    pub fn idx(self) -> usize {
        self as usize
    }
}

/// `rw=` (fio's `td_ddir` plus the random flag).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RwPattern {
    Read,
    Write,
    Trim,
    RandRead,
    RandWrite,
    RandTrim,
    /// `rw`/`readwrite`: sequential mix of reads and writes.
    ReadWrite,
    /// `randrw`
    RandRw,
    /// `trimwrite`
    TrimWrite,
}

impl RwPattern {
    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwPattern::RandRead | RwPattern::RandWrite | RwPattern::RandTrim | RwPattern::RandRw
        )
    }
    pub fn has(self, d: Ddir) -> bool {
        use RwPattern::*;
        match d {
            Ddir::Read => matches!(self, Read | RandRead | ReadWrite | RandRw),
            Ddir::Write => matches!(self, Write | RandWrite | ReadWrite | RandRw | TrimWrite),
            Ddir::Trim => matches!(self, Trim | RandTrim | TrimWrite),
        }
    }
    /// The name fio prints in its job header line (`rw=randrw`).
    pub fn fio_name(self) -> &'static str {
        use RwPattern::*;
        match self {
            Read => "read",
            Write => "write",
            Trim => "trim",
            RandRead => "randread",
            RandWrite => "randwrite",
            RandTrim => "randtrim",
            ReadWrite => "rw",
            RandRw => "randrw",
            TrimWrite => "trimwrite",
        }
    }
}

/// Block size choice for one direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BsSpec {
    Fixed(u32),
    /// `bsrange=lo-hi`: uniform over multiples of `lo` (fio's default `bs_unaligned=0`).
    Range {
        lo: u32,
        hi: u32,
    },
    /// `bssplit`: (size, percent) pairs; percents sum to 100 after fio's fill-in of blanks.
    Split(Vec<(u32, u32)>),
}

impl BsSpec {
    pub fn min(&self) -> u32 {
        match self {
            BsSpec::Fixed(b) => *b,
            BsSpec::Range { lo, .. } => *lo,
            BsSpec::Split(v) => v.iter().map(|x| x.0).min().unwrap_or(4096),
        }
    }
    pub fn max(&self) -> u32 {
        match self {
            BsSpec::Fixed(b) => *b,
            BsSpec::Range { hi, .. } => *hi,
            BsSpec::Split(v) => v.iter().map(|x| x.0).max().unwrap_or(4096),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Engine {
    /// psync/sync/pvsync/pvsync2: one blocking syscall per IO, no slat.
    Sync,
    /// libaio: io_submit/io_getevents.
    Libaio,
    /// io_uring
    IoUring,
    /// mmap: the job maps its file and copies to/from the mapping, so its
    /// I/O is page faults (blklab's memory-user job; page cache required).
    Mmap,
}

impl Engine {
    pub fn is_async(self) -> bool {
        !matches!(self, Engine::Sync | Engine::Mmap)
    }
}

/// `fadvise_hint=`: the advice fio gives the kernel for each file it opens
/// (`td_io_open_file` calls `posix_fadvise` over the job's range for block
/// devices and regular files).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FadviseHint {
    /// `0`: no advice.
    None,
    /// `1` (fio's default): POSIX_FADV_RANDOM for random jobs,
    /// POSIX_FADV_SEQUENTIAL otherwise.
    Type,
    Random,
    Sequential,
    /// POSIX_FADV_NOREUSE.
    Noreuse,
}

/// The `posix_fadvise` advice a job's file receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fadvice {
    Normal,
    Random,
    Sequential,
    Noreuse,
}

impl FadviseHint {
    /// The advice `td_io_open_file` passes for a job whose pattern is (or is
    /// not) random; `None` when fio makes no call.
    pub fn advice(self, random: bool) -> Option<Fadvice> {
        match self {
            FadviseHint::None => None,
            FadviseHint::Type if random => Some(Fadvice::Random),
            FadviseHint::Type => Some(Fadvice::Sequential),
            FadviseHint::Random => Some(Fadvice::Random),
            FadviseHint::Sequential => Some(Fadvice::Sequential),
            FadviseHint::Noreuse => Some(Fadvice::Noreuse),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RateProcess {
    Linear,
    Poisson,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnifiedRw {
    None,
    Mixed,
    Both,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThinkBlocksType {
    Complete,
    Issue,
}

/// One fio job (before `numjobs` cloning), with every option the simulator
/// honours. Defaults are fio's.
#[derive(Clone, Debug)]
pub struct JobSpec {
    pub name: String,
    /// Options of this job exactly as written (name and value strings), in order,
    /// for `"job options"` in the JSON. Global options are not repeated here.
    pub raw_options: Vec<(String, String)>,
    /// The `[global]` options in force for this job, as written.
    pub global_options: Vec<(String, String)>,
    pub rw: RwPattern,
    /// `rw=randread:8`: a new offset only every N IOs (1 = always).
    pub rw_seq_nr: u32,
    pub rwmixread: u32,
    pub bs: [BsSpec; 3],
    pub ioengine: Engine,
    /// The engine name as fio prints it in the job header (`psync`, `libaio`, ...).
    pub ioengine_name: String,
    pub iodepth: u32,
    pub iodepth_batch_submit: u32,
    pub iodepth_batch_complete_min: u32,
    pub iodepth_batch_complete_max: u32,
    pub iodepth_low: u32,
    pub direct: bool,
    pub filename: Option<String>,
    /// Bytes of IO per job (`size`); None = the whole target.
    pub size: Option<u64>,
    pub offset: u64,
    pub runtime_ns: Option<u64>,
    pub time_based: bool,
    pub ramp_time_ns: u64,
    /// `startdelay=lo[-hi]`
    pub startdelay_ns: (u64, u64),
    pub numjobs: u32,
    pub group_reporting: bool,
    /// `rate=` in bytes/s per direction (0 = none).
    pub rate_bps: [u64; 3],
    /// `rate_iops=` per direction (0 = none).
    pub rate_iops: [u64; 3],
    pub rate_process: RateProcess,
    pub rate_ignore_thinktime: bool,
    pub thinktime_ns: u64,
    pub thinktime_spin_ns: u64,
    pub thinktime_blocks: u32,
    pub thinktime_blocks_type: ThinkBlocksType,
    pub norandommap: bool,
    pub fadvise_hint: FadviseHint,
    pub unified_rw_reporting: UnifiedRw,
    /// `prio` (level 0..7) and `prioclass` (1 RT, 2 BE, 3 IDLE).
    pub prio: Option<u8>,
    pub prioclass: Option<u8>,
    pub percentile_list: Vec<f64>,
    /// Decimals used when printing percentiles in the text output (fio's
    /// `percentile_precision`: the most decimals written in `percentile_list`).
    pub percentile_precision: u32,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    pub bwavgtime_ms: u64,
    pub iopsavgtime_ms: u64,
    /// `cgroup=` (fio creates and joins it). In a scenario the job's cgroup comes
    /// from the scenario; this is kept for reference and checked for agreement.
    pub cgroup: Option<String>,
    /// `stonewall`/`new_group`: starts a new reporting group.
    pub new_group: bool,
    pub stonewall: bool,
    /// `number_ios`: stop after this many IOs (0 = unlimited).
    pub number_ios: u64,
    /// `kb_base` (1024 or 1000), for reference when printing.
    pub kb_base: u32,
    /// `description` (JSON `desc`, text `Description  : [...]`).
    pub description: Option<String>,
    /// `thread`: fio says "Starting N threads" instead of processes.
    pub thread: bool,
    /// Command-line `--output-format=` (fio-level argument, not a job option).
    pub output_format: Option<String>,
    /// Command-line `--output=` (fio-level argument, not a job option).
    pub output: Option<String>,
    /// Options that were accepted but have no effect on the simulation
    /// (e.g. `output-format`, `invalidate`); the front-end warns about them.
    pub ignored: Vec<String>,
    /// The log options (`write_bw_log`, `log_avg_msec`, ...).
    pub logs: LogOptions,
}

/// fio's default `percentile_list`.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

impl JobSpec {
    /// A job with fio's defaults (`rw=read bs=4k ioengine=psync iodepth=1`).
    pub fn new(name: &str) -> JobSpec {
        JobSpec {
            name: name.to_string(),
            raw_options: Vec::new(),
            global_options: Vec::new(),
            rw: RwPattern::Read,
            rw_seq_nr: 1,
            rwmixread: 50,
            bs: [
                BsSpec::Fixed(4096),
                BsSpec::Fixed(4096),
                BsSpec::Fixed(4096),
            ],
            ioengine: Engine::Sync,
            ioengine_name: "psync".to_string(),
            iodepth: 1,
            iodepth_batch_submit: 1,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: 1,
            iodepth_low: 1,
            direct: false,
            filename: None,
            size: None,
            offset: 0,
            runtime_ns: None,
            time_based: false,
            ramp_time_ns: 0,
            startdelay_ns: (0, 0),
            numjobs: 1,
            group_reporting: false,
            rate_bps: [0; 3],
            rate_iops: [0; 3],
            rate_process: RateProcess::Linear,
            rate_ignore_thinktime: false,
            thinktime_ns: 0,
            thinktime_spin_ns: 0,
            thinktime_blocks: 1,
            thinktime_blocks_type: ThinkBlocksType::Complete,
            norandommap: false,
            fadvise_hint: FadviseHint::Type,
            unified_rw_reporting: UnifiedRw::None,
            prio: None,
            prioclass: None,
            percentile_list: DEFAULT_PERCENTILES.to_vec(),
            percentile_precision: 2,
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            bwavgtime_ms: 500,
            iopsavgtime_ms: 500,
            cgroup: None,
            new_group: false,
            stonewall: false,
            number_ios: 0,
            kb_base: 1024,
            description: None,
            thread: false,
            output_format: None,
            output: None,
            ignored: Vec::new(),
            logs: LogOptions::default(),
        }
    }
}

/// The log options of a job (fio's `thread_options` log fields); the
/// files themselves are `crate::log`'s.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogOptions {
    /// `write_bw_log[=PREFIX]`: the prefix ("" = the job's name), if set.
    pub bw: Option<String>,
    /// `write_lat_log[=PREFIX]`: clat, slat and lat logs.
    pub lat: Option<String>,
    pub iops: Option<String>,
    /// `write_hist_log[=PREFIX]`: the clat histogram log.
    pub hist: Option<String>,
    pub avg_msec: u64,
    pub hist_msec: u64,
    pub hist_coarseness: u32,
    /// `log_max_value`: averaged entries carry the window's maximum.
    pub log_max: bool,
    pub log_offset: bool,
    pub log_prio: bool,
    pub per_job_logs: bool,
}

impl Default for LogOptions {
    fn default() -> Self {
        LogOptions {
            bw: None,
            lat: None,
            iops: None,
            hist: None,
            avg_msec: 0,
            hist_msec: 0,
            hist_coarseness: 0,
            log_max: false,
            log_offset: false,
            log_prio: false,
            per_job_logs: true,
        }
    }
}

impl LogOptions {
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.lat.is_some() || self.iops.is_some() || self.hist.is_some()
    }
}

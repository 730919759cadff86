//! blklab-vm: run cgroup-v2 I/O cases against stock Debian kernels booted
//! under QEMU, for hosts whose own io controller is unavailable (e.g. held
//! by a cgroup v1 blkio hierarchy).
//!
//! One call boots one kernel once and runs many cases in order:
//!
//! ```no_run
//! use blklab_vm::{run_cases, CaseSpec, RunOptions};
//! let cases = vec![blklab_vm::probe::guest_info_case(), CaseSpec {
//!     name: "hello".into(),
//!     script: "echo hello from $(uname -r)".into(),
//!     time_limit_secs: 10,
//! }];
//! let run = run_cases("debian-6.12", &cases, &RunOptions::default())?;
//! if let Some(why) = run.failure() { eprintln!("{why}"); }
//! for c in &run.cases { println!("{}: {:?}", c.name, c.outcome); }
//! # Ok::<(), blklab_vm::VmError>(())
//! ```
//!
//! Under `-icount shift=0,sleep=off` only controller-timed figures are
//! physical (iocost budgets, throttle slices, timers); a loop device's own
//! latency depends on the emulated CPU's speed.

pub mod apt;
pub mod cache;
pub mod cpio;
pub mod digest;
pub mod error;
pub mod init_script;
pub mod initramfs;
pub mod kbuild;
pub mod kconfig;
pub mod kernels;
pub mod kmod;
pub mod local;
pub mod probe;
pub mod protocol;
pub mod qemu;
pub mod tools;

use std::path::PathBuf;

pub use cache::ensure;
pub use error::VmError;
pub use initramfs::{Compression, GuestTools};
pub use kernels::{list, Kernel, KernelPin, KERNELS};
pub use protocol::{CaseOutcome, CaseResult, CaseSpec};
pub use qemu::{BootEnd, BootOptions};

use error::Result;

/// Options of `run_cases`.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Kernel cache; default `kernels::default_cache_dir()`.
    pub cache_dir: Option<PathBuf>,
    pub boot: BootOptions,
    pub compression: Compression,
}

/// One boot's outcome.
#[derive(Debug, Clone)]
pub struct Run {
    pub kernel: Kernel,
    /// One per case sent, in order; cases the guest did not finish say so.
    pub cases: Vec<CaseResult>,
    pub end: BootEnd,
    /// /init reported every case and QEMU exited by itself.
    pub completed: bool,
    /// Setup steps of /init that failed (a module that would not load…).
    pub setup_errors: Vec<String>,
    /// Frames that fit no case.
    pub problems: Vec<String>,
    pub wall_secs: f64,
    /// Wall time until /init was about to run the first case.
    pub ready_wall_secs: Option<f64>,
    /// Guest uptime at that moment.
    pub ready_uptime_ms: Option<u64>,
    pub initramfs_bytes: u64,
    /// The console's last lines.
    pub console_tail: String,
    pub qemu_stderr: String,
}

impl Run {
    /// Why the boot did not complete (None when it did), with the console's
    /// last lines.
    pub fn failure(&self) -> Option<String> {
        if self.completed {
            return None;
        }
        let what = match &self.end {
            BootEnd::TimedOut { limit_secs } => {
                format!("timed out: the guest was still running after {limit_secs} s (wall) and was killed")
            }
            BootEnd::Cancelled => "cancelled: the guest was stopped on request".to_string(),
            BootEnd::TooLarge { what, limit_bytes } => {
                format!("{what} exceeded {limit_bytes} bytes; the guest was stopped")
            }
            BootEnd::Exited { status } if self.ready_wall_secs.is_none() => format!(
                "the guest stopped before /init was ready (qemu exit status {status:?}; a kernel panic or an /init error)"
            ),
            BootEnd::Exited { status } => format!(
                "the guest stopped before finishing its cases (qemu exit status {status:?})"
            ),
        };
        let mut s = format!(
            "{what}\n--- console (last lines) ---\n{}",
            self.console_tail
        );
        if !self.qemu_stderr.is_empty() {
            s.push_str(&format!("\n--- qemu stderr ---\n{}", self.qemu_stderr));
        }
        Some(s)
    }

    /// The result of the case called `name`.
    pub fn case(&self, name: &str) -> Option<&CaseResult> {
        self.cases.iter().find(|c| c.name == name)
    }
}

/// The host programs a boot needs that are missing (each an exit-4 class
/// error naming its Debian package). Empty when the host can boot guests.
pub fn preflight() -> Vec<VmError> {
    let mut missing = Vec::new();
    if let Err(e) = tools::require(tools::QEMU) {
        missing.push(e);
    }
    if let Err(e) = tools::busybox() {
        missing.push(e);
    }
    for t in [tools::FIO, tools::LOSETUP, tools::LDD] {
        if let Err(e) = tools::require(t) {
            missing.push(e);
        }
    }
    missing
}

/// Fetch (if needed) and verify kernel `kernel_name`, boot it once, run
/// `cases` in order and return every case's result.
pub fn run_cases(kernel_name: &str, cases: &[CaseSpec], opts: &RunOptions) -> Result<Run> {
    init_script::validate(cases)?;
    if let Some(e) = preflight().into_iter().next() {
        return Err(e);
    }
    let cache = match &opts.cache_dir {
        Some(c) => c.clone(),
        None => kernels::default_cache_dir()?,
    };
    let kernel = cache::ensure(kernel_name, &cache)?;
    let tools = GuestTools::find()?;
    run_on(&kernel, &tools, cases, opts)
}

/// `run_cases` with a kernel and tools already at hand.
pub fn run_on(
    kernel: &Kernel,
    tools: &GuestTools,
    cases: &[CaseSpec],
    opts: &RunOptions,
) -> Result<Run> {
    let work = tempfile::Builder::new()
        .prefix("blklab-vm-")
        .tempdir()
        .map_err(|e| VmError::io("creating a temporary directory", e))?;
    let initrd = initramfs::build(
        kernel,
        tools,
        cases,
        opts.compression,
        &work.path().join("initrd.cpio"),
    )?;
    let boot = qemu::boot(&kernel.vmlinuz, &initrd.path, work.path(), &opts.boot)?;
    let names: Vec<String> = cases.iter().map(|c| c.name.clone()).collect();
    let parsed = protocol::parse(&boot.results, &names);
    let completed = parsed.done && matches!(boot.end, BootEnd::Exited { .. });
    let why = match &boot.end {
        BootEnd::TimedOut { limit_secs } => {
            format!("the boot hit its wall-time limit of {limit_secs} s")
        }
        BootEnd::Cancelled => "the boot was cancelled".to_string(),
        BootEnd::TooLarge { what, .. } => format!("{what} exceeded its cap"),
        BootEnd::Exited { .. } => "the guest stopped (see the console)".to_string(),
    };
    let mut results = parsed.cases;
    for r in &mut results {
        match &mut r.outcome {
            CaseOutcome::Unfinished { reason } => *reason = format!("{why} during this case"),
            CaseOutcome::NotRun { reason } => *reason = format!("{why} before it began"),
            _ => {}
        }
    }
    for (i, secs) in &boot.case_wall_secs {
        if let Some(r) = results.get_mut(*i) {
            r.wall_secs = Some(*secs);
        }
    }
    Ok(Run {
        kernel: kernel.clone(),
        cases: results,
        end: boot.end,
        completed,
        setup_errors: parsed.setup_errors,
        problems: parsed.problems,
        wall_secs: boot.wall_secs,
        ready_wall_secs: boot.ready_wall_secs,
        ready_uptime_ms: parsed.ready_uptime_ms,
        initramfs_bytes: initrd.size_bytes,
        console_tail: boot.console_tail,
        qemu_stderr: boot.qemu_stderr,
    })
}

//! Setting up the ftrace `blk` tracer (spec §5.1, route A) and putting every
//! setting back afterwards.
//!
//! Checked on kernel 6.18: the `blk` tracer is *not* offered in tracefs
//! instances (`instances/X/available_tracers` lists only function and nop;
//! writing `blk` gives EINVAL), so it runs in the global buffer. Every file we
//! write is read first and pushed on a restore list; `restore()` (also run by
//! `Drop`, i.e. on error returns and panics, and by the callers after a
//! SIGINT/SIGTERM/SIGHUP caught by `install_signal_handlers`) writes the old
//! values back in reverse order. If tracefs was not mounted, it is mounted
//! and unmounted again. The trace buffer's old contents are discarded (they
//! cannot be restored). A SIGKILL cannot be caught: then run
//! `echo 0 > /sys/block/DEV/trace/enable; echo nop > .../current_tracer`.

use crate::error::{HostError, Result};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, Once};

use rustix::fs::OFlags;
use rustix::mount::{mount, unmount as umount, MountFlags, UnmountFlags};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::SigId;

/// What the setup changes.
#[derive(Debug, Clone)]
pub struct TraceConfig {
    /// Block devices by name ("loop0", "nvme0n1", a partition "sda1").
    pub devices: Vec<String>,
    /// Per-CPU ring buffer size.
    pub buffer_size_kb: u32,
    /// `/sys/block/DEV/trace/act_mask`, e.g. "queue,issue,complete,requeue".
    /// None keeps all events, which keeps split (X) events (they have no
    /// category of their own and pass only with read/write in the mask).
    pub act_mask: Option<String>,
}

#[derive(Debug)]
struct Saved {
    path: PathBuf,
    value: String,
}

/// An active blk-tracer setup; restores everything on drop.
#[derive(Debug)]
pub struct BlkTrace {
    pub root: PathBuf,
    saved: Vec<Saved>,
    mounted: bool,
    restored: bool,
    /// dev_t (major<<20|minor) and name of each traced device
    pub devices: Vec<(u32, String)>,
}

fn read_trim(p: &Path) -> Result<String> {
    std::fs::read_to_string(p)
        .map(|s| s.trim().to_string())
        .map_err(|e| HostError::io(p, e))
}

fn write_file(p: &Path, v: &str) -> Result<()> {
    std::fs::write(p, v).map_err(|e| HostError::io(p, e))
}

/// The sysfs directory of a block device or partition.
pub fn sysfs_dir(dev: &str) -> PathBuf {
    Path::new("/sys/class/block").join(dev)
}

/// dev_t of a device name from its sysfs `dev` file ("MAJ:MIN").
pub fn dev_number(dev: &str) -> Result<u32> {
    let p = sysfs_dir(dev).join("dev");
    let s = read_trim(&p).map_err(|_| HostError::Device {
        dev: dev.into(),
        msg: format!("no such block device ({} missing)", p.display()),
    })?;
    let (a, b) = s.split_once(':').ok_or_else(|| HostError::Device {
        dev: dev.into(),
        msg: format!("bad dev {s:?}"),
    })?;
    let ma: u32 = a.parse().map_err(|_| HostError::Device {
        dev: dev.into(),
        msg: format!("bad dev {s:?}"),
    })?;
    let mi: u32 = b.parse().map_err(|_| HostError::Device {
        dev: dev.into(),
        msg: format!("bad dev {s:?}"),
    })?;
    Ok(crate::events::mkdev(ma, mi))
}

/// Name of a block device from its dev_t, via /sys/dev/block/MAJ:MIN.
pub fn dev_name(dev: u32) -> String {
    let (ma, mi) = (crate::events::dev_major(dev), crate::events::dev_minor(dev));
    std::fs::read_link(format!("/sys/dev/block/{ma}:{mi}"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| format!("{ma}:{mi}"))
}

/// Where tracefs is mounted now, if it is (the usual place first, then the
/// old debugfs one); never mounts it.
pub fn mounted_tracefs() -> Option<PathBuf> {
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .map(PathBuf::from)
        .find(|c| c.join("trace").exists())
}

/// The global tracer's name, or None when tracefs is not mounted: with the
/// device's `trace/enable`, the state a trace session must leave as found.
pub fn current_tracer() -> Option<String> {
    let root = mounted_tracefs()?;
    std::fs::read_to_string(root.join("current_tracer"))
        .ok()
        .map(|s| s.trim().to_string())
}

/// Find (or mount) tracefs. Returns (root, mounted_by_us).
pub fn find_tracefs() -> Result<(PathBuf, bool)> {
    if let Some(root) = mounted_tracefs() {
        return Ok((root, false));
    }
    let target = Path::new("/sys/kernel/tracing");
    if !target.is_dir() {
        return Err(HostError::NoTracefs(
            "/sys/kernel/tracing does not exist".into(),
        ));
    }
    let fs = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    if !fs
        .lines()
        .any(|l| l.split_whitespace().last() == Some("tracefs"))
    {
        return Err(HostError::NoTracefs(
            "the kernel has no tracefs (CONFIG_TRACING off)".into(),
        ));
    }
    if let Err(e) = mount("nodev", target, "tracefs", MountFlags::empty(), None) {
        return Err(HostError::NoTracefs(format!(
            "tracefs is not mounted and mounting it failed: {}",
            std::io::Error::from(e)
        )));
    }
    Ok((target.to_path_buf(), true))
}

/// Fail early, with a precise message, when this host cannot be traced.
pub fn check_environment() -> Result<PathBuf> {
    let uid = rustix::process::geteuid();
    if !uid.is_root() {
        return Err(HostError::NotRoot { uid: uid.as_raw() });
    }
    let (root, mounted) = find_tracefs()?;
    let avail = std::fs::read_to_string(root.join("available_tracers")).unwrap_or_default();
    let r = if !avail.split_whitespace().any(|t| t == "blk") {
        Err(HostError::NoBlkTracer {
            available: avail.trim().to_string(),
        })
    } else {
        Ok(root.clone())
    };
    if mounted {
        unmount(&root);
    }
    r
}

/// Unmount tracefs that [`find_tracefs`] mounted; failure (EBUSY) leaves it.
pub fn unmount(root: &Path) {
    // Failure (EBUSY: someone else uses it now) leaves it mounted.
    let _ = umount(root, UnmountFlags::empty());
}

impl BlkTrace {
    /// Configure the global tracer for `cfg.devices` and start tracing.
    pub fn start(cfg: &TraceConfig) -> Result<BlkTrace> {
        let uid = rustix::process::geteuid();
        if !uid.is_root() {
            return Err(HostError::NotRoot { uid: uid.as_raw() });
        }
        let (root, mounted) = find_tracefs()?;
        let mut bt = BlkTrace {
            root: root.clone(),
            saved: Vec::new(),
            mounted,
            restored: false,
            devices: Vec::new(),
        };
        let avail = read_trim(&root.join("available_tracers"))?;
        if !avail.split_whitespace().any(|t| t == "blk") {
            return Err(HostError::NoBlkTracer { available: avail });
        }
        let cur = read_trim(&root.join("current_tracer"))?;
        if cur != "nop" {
            return Err(HostError::TracerBusy { current: cur });
        }
        if cfg.devices.is_empty() {
            return Err(HostError::Other("no device to trace".into()));
        }
        for d in &cfg.devices {
            let dev = dev_number(d)?;
            let en = sysfs_dir(d).join("trace/enable");
            let v = read_trim(&en).map_err(|_| HostError::Device {
                dev: d.clone(),
                msg: format!("{} missing (no blk trace support for it)", en.display()),
            })?;
            if v != "0" {
                return Err(HostError::Device {
                    dev: d.clone(),
                    msg: "block tracing already enabled by someone else".into(),
                });
            }
            bt.devices.push((dev, d.clone()));
        }
        bt.set(&root.join("tracing_on"), "0")?;
        let clock = read_trim(&root.join("trace_clock"))?;
        let cur_clock = clock
            .split_whitespace()
            .find(|w| w.starts_with('['))
            .map(|w| w.trim_matches(['[', ']']).to_string())
            .unwrap_or_else(|| "local".into());
        bt.set_with_old(&root.join("trace_clock"), "mono", cur_clock)?;
        // reads "7 (expanded: 1408)" before first use: keep the number only
        let old_kb = read_trim(&root.join("buffer_size_kb"))?;
        let old_kb = old_kb
            .split_whitespace()
            .next()
            .unwrap_or("1408")
            .to_string();
        bt.set_with_old(
            &root.join("buffer_size_kb"),
            &cfg.buffer_size_kb.to_string(),
            old_kb,
        )?;
        bt.set(&root.join("current_tracer"), "blk")?;
        // after the tracer so that they are restored before it goes back to nop
        bt.set(&root.join("options/context-info"), "1")?;
        bt.set(&root.join("options/blk_classic"), "0")?;
        bt.set(&root.join("options/blk_cgname"), "0")?;
        bt.set(&root.join("options/blk_cgroup"), "1")?;
        // empty the buffer (old contents are not restorable)
        write_file(&root.join("trace"), "")?;
        for d in cfg.devices.clone() {
            let dir = sysfs_dir(&d).join("trace");
            if let Some(m) = &cfg.act_mask {
                bt.set(&dir.join("act_mask"), m)?;
            }
            bt.set(&dir.join("enable"), "1").map_err(|e| HostError::Device {
                dev: d.clone(),
                msg: format!("enabling the blk trace failed ({e}); a blktrace(8) session may hold the queue (EBUSY)"),
            })?;
        }
        bt.set(&root.join("tracing_on"), "1")?;
        Ok(bt)
    }

    fn set(&mut self, p: &Path, v: &str) -> Result<()> {
        let old = read_trim(p)?;
        self.set_with_old(p, v, old)
    }

    fn set_with_old(&mut self, p: &Path, v: &str, old: String) -> Result<()> {
        self.saved.push(Saved {
            path: p.to_path_buf(),
            value: old,
        });
        write_file(p, v)
    }

    /// Per-CPU ring-buffer statistics: (overrun, dropped events) summed.
    pub fn buffer_losses(&self) -> (u64, u64) {
        ring_losses(&self.root)
    }

    /// Open trace_pipe (consuming, non-blocking).
    pub fn open_pipe(&self) -> Result<TracePipe> {
        let p = self.root.join("trace_pipe");
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(OFlags::NONBLOCK.bits() as i32)
            .open(&p)
            .map_err(|e| HostError::io(&p, e))?;
        Ok(TracePipe { f, path: p })
    }

    /// Stop tracing (the pipe can still be drained).
    pub fn stop(&self) {
        let _ = write_file(&self.root.join("tracing_on"), "0");
    }

    /// Put every changed setting back; returns the failures, if any.
    pub fn restore(&mut self) -> Result<()> {
        if self.restored {
            return Ok(());
        }
        self.restored = true;
        self.stop();
        let mut errs = Vec::new();
        while let Some(s) = self.saved.pop() {
            if let Err(e) = write_file(&s.path, &s.value) {
                errs.push(e.to_string());
            }
        }
        if self.mounted {
            unmount(&self.root);
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(HostError::Other(format!(
                "restoring tracefs settings failed: {}",
                errs.join("; ")
            )))
        }
    }
}

impl Drop for BlkTrace {
    fn drop(&mut self) {
        if let Err(e) = self.restore() {
            eprintln!("blklab-host: {e}");
        }
    }
}

/// Sum of `overrun` and `dropped events` over per_cpu/cpu*/stats.
pub fn ring_losses(root: &Path) -> (u64, u64) {
    let (mut ov, mut dr) = (0, 0);
    if let Ok(rd) = std::fs::read_dir(root.join("per_cpu")) {
        for e in rd.flatten() {
            let s = std::fs::read_to_string(e.path().join("stats")).unwrap_or_default();
            for l in s.lines() {
                if let Some(v) = l.strip_prefix("overrun:") {
                    ov += v.trim().parse::<u64>().unwrap_or(0);
                } else if let Some(v) = l.strip_prefix("dropped events:") {
                    dr += v.trim().parse::<u64>().unwrap_or(0);
                }
            }
        }
    }
    (ov, dr)
}

/// Non-blocking reader of trace_pipe that hands out complete lines.
pub struct TracePipe {
    f: std::fs::File,
    path: PathBuf,
}

impl TracePipe {
    /// Append what is available now to `buf`; Ok(0) when nothing is ready.
    pub fn read_available(&mut self, buf: &mut Vec<u8>) -> Result<usize> {
        let mut total = 0;
        let mut chunk = [0u8; 65536];
        loop {
            match self.f.read(&mut chunk) {
                Ok(0) => return Ok(total),
                Ok(n) => {
                    buf.extend_from_slice(&chunk[..n]);
                    total += n;
                    if total >= 8 << 20 {
                        return Ok(total);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Ok(total),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(HostError::io(&self.path, e)),
            }
        }
    }
}

/// The signal that asked us to stop (0: none), stored by signal-hook's
/// handler (an atomic store, async-signal-safe).
static LAST_SIGNAL: AtomicUsize = AtomicUsize::new(0);
/// True while no [`SignalGuard`] is alive: the signals then take their
/// default action (terminate), as before any guard existed.
static DEFAULT_ACTION: AtomicBool = AtomicBool::new(true);
/// Live guards (they may overlap, e.g. two traced sessions in one process).
static GUARDS: Mutex<usize> = Mutex::new(0);
static INSTALL: Once = Once::new();
const SIGNALS: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

/// SIGINT/SIGTERM/SIGHUP set a flag (`stop_requested`) instead of killing the
/// process, so the trace loop can return and restore tracefs. When the last
/// guard is dropped the signals kill the process again.
pub struct SignalGuard {
    ids: Vec<SigId>,
}

pub fn install_signal_handlers() -> SignalGuard {
    INSTALL.call_once(|| {
        for sig in SIGNALS {
            // The default action while no guard is alive; registration fails
            // only for signals that cannot be caught, which these are not.
            let _ = signal_hook::flag::register_conditional_default(sig, &DEFAULT_ACTION);
        }
    });
    let mut live = GUARDS.lock().unwrap_or_else(|e| e.into_inner());
    LAST_SIGNAL.store(0, Ordering::SeqCst);
    let ids = SIGNALS
        .iter()
        .filter_map(|&sig| signal_hook::flag::register_usize(sig, &LAST_SIGNAL, sig as usize).ok())
        .collect();
    *live += 1;
    DEFAULT_ACTION.store(false, Ordering::SeqCst);
    SignalGuard { ids }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        let mut live = GUARDS.lock().unwrap_or_else(|e| e.into_inner());
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
        *live = live.saturating_sub(1);
        if *live == 0 {
            DEFAULT_ACTION.store(true, Ordering::SeqCst);
        }
    }
}

/// A signal asked us to stop.
pub fn stop_requested() -> bool {
    LAST_SIGNAL.load(Ordering::SeqCst) != 0
}

/// The signal that asked us to stop (0 if none).
pub fn last_signal() -> i32 {
    LAST_SIGNAL.load(Ordering::SeqCst) as i32
}

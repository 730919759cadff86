//! What this host offers for running a case on the real kernel: root, fio,
//! loop devices, a tmpfs for their backing files, and where the io
//! controller lives (cgroup v2 with or without blk-iocost, or only the v1
//! `blkio` hierarchy, whose blk-throttle files take `MAJ:MIN VALUE`).
//!
//! Each missing piece is reported as a sentence saying exactly what was
//! looked for, so the harness can print it and exit with a distinct status.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where blk-throttle (io.max) can be configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ThrottleVia {
    /// cgroup v2 `io.max` under this mount (io listed in its cgroup.controllers).
    V2(PathBuf),
    /// cgroup v1 `blkio.throttle.*_device` under this blkio mount.
    V1(PathBuf),
}

/// What the host offers. `missing_*` hold the reasons a capability is absent.
#[derive(Debug, Clone)]
pub struct HostEnv {
    pub root: bool,
    pub fio: Option<(PathBuf, String)>,
    pub losetup: Option<PathBuf>,
    pub loop_control: bool,
    pub tmpfs: Option<PathBuf>,
    pub throttle: Option<ThrottleVia>,
    /// The v2 mount whose root has io.cost.qos / io.cost.model (blk-iocost).
    pub iocost: Option<PathBuf>,
    /// Why iocost is unavailable (when `iocost` is None).
    pub iocost_missing: String,
    /// Why the io controller is unavailable altogether (when `throttle` is None).
    pub io_missing: String,
}

impl HostEnv {
    /// Everything needed before any case can run (root, fio, loop, tmpfs, an io
    /// controller somewhere); empty when the host can run throttle cases.
    pub fn missing_basics(&self) -> Vec<String> {
        let mut m = Vec::new();
        if !self.root {
            m.push(
                "not running as root (uid 0 is needed to create loop devices and cgroups)".into(),
            );
        }
        if self.fio.is_none() {
            m.push(
                "fio is not installed (no `fio` in PATH; on Debian: apt-get install -y fio)".into(),
            );
        }
        if self.losetup.is_none() {
            m.push("losetup is not installed (util-linux)".into());
        }
        if !self.loop_control {
            m.push("no loop device support (/dev/loop-control is missing: modprobe loop)".into());
        }
        if self.tmpfs.is_none() {
            m.push("no writable tmpfs for the backing files (looked for /dev/shm and /run)".into());
        }
        if self.throttle.is_none() {
            m.push(self.io_missing.clone());
        }
        m
    }
}

fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn is_tmpfs(p: &Path) -> bool {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines().any(|l| {
        let Some((pre, post)) = l.split_once(" - ") else {
            return false;
        };
        pre.split(' ').nth(4) == Some(&p.display().to_string()) && post.starts_with("tmpfs ")
    })
}

/// Probe the host. Reads only; changes nothing.
pub fn probe() -> HostEnv {
    let root = rustix::process::geteuid().is_root();
    let fio = which("fio").map(|p| {
        let v = Command::new(&p)
            .arg("--version")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        (p, v)
    });
    let losetup = which("losetup");
    let loop_control = Path::new("/dev/loop-control").exists();
    let tmpfs = ["/dev/shm", "/run"]
        .iter()
        .map(PathBuf::from)
        .find(|p| is_tmpfs(p));

    let (v2, v1) = blklab_host::cgroup_fs::cgroup_mounts();
    let mut throttle = None;
    let mut iocost = None;
    let mut v2_io = None;
    for m in &v2 {
        let ctrl = std::fs::read_to_string(m.join("cgroup.controllers")).unwrap_or_default();
        if ctrl.split_whitespace().any(|c| c == "io") {
            v2_io = Some(m.clone());
            break;
        }
    }
    if let Some(m) = &v2_io {
        throttle = Some(ThrottleVia::V2(m.clone()));
        if m.join("io.cost.qos").exists() && m.join("io.cost.model").exists() {
            iocost = Some(m.clone());
        }
    } else if let Some(m) = v1.first() {
        if m.join("blkio.throttle.read_iops_device").exists() {
            throttle = Some(ThrottleVia::V1(m.clone()));
        }
    }
    let v2_names: Vec<String> = v2.iter().map(|p| p.display().to_string()).collect();
    let iocost_missing = match (&v2_io, v2.first()) {
        (Some(m), _) if iocost.is_none() => format!(
            "{}/io.cost.qos and io.cost.model are absent: this kernel has no blk-iocost (CONFIG_BLK_CGROUP_IOCOST)",
            m.display()
        ),
        (Some(_), _) => String::new(),
        (None, Some(m)) => format!(
            "blk-iocost needs the io controller on cgroup v2, but `io` is not in {}/cgroup.controllers{} and {}/io.cost.qos, io.cost.model are absent",
            m.display(),
            match v1.first() {
                Some(b) => format!(" (it is held by the cgroup v1 blkio hierarchy at {})", b.display()),
                None => String::new(),
            },
            m.display()
        ),
        (None, None) => "blk-iocost needs a cgroup v2 hierarchy: none is mounted (no cgroup2 in /proc/self/mountinfo)".into(),
    };
    let io_missing = if throttle.is_some() {
        String::new()
    } else {
        format!(
            "no io controller: `io` is not in cgroup.controllers of any cgroup v2 mount ({}) and no cgroup v1 blkio hierarchy with blkio.throttle.* is mounted",
            if v2_names.is_empty() { "none mounted".to_string() } else { v2_names.join(", ") }
        )
    };
    HostEnv {
        root,
        fio,
        losetup,
        loop_control,
        tmpfs,
        throttle,
        iocost,
        iocost_missing,
        io_missing,
    }
}

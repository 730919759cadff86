//! What a real-host test needs from the host; each check gives the reason a
//! test prints after `SKIP:` when the host lacks it.

use std::path::Path;

use crate::shell::sh;

/// Root, fio, losetup and a tmpfs at /dev/shm: what every real-host test
/// needs. None when all are there.
pub fn missing_basics() -> Option<String> {
    if !rustix::process::geteuid().is_root() {
        return Some("not root (loop devices and cgroups need it)".into());
    }
    for tool in ["fio", "losetup"] {
        if sh(&format!("command -v {tool}")).is_err() {
            return Some(format!("{tool} is not installed"));
        }
    }
    if !Path::new("/dev/shm").is_dir() {
        return Some("no tmpfs at /dev/shm".into());
    }
    None
}

/// The cgroup v1 blkio hierarchy at /sys/fs/cgroup/blkio, for tests that
/// drive blk-throttle through blkio.throttle.* files.
pub fn missing_v1_blkio() -> Option<String> {
    if Path::new(crate::host_lab::V1_BLKIO)
        .join("cgroup.procs")
        .exists()
    {
        None
    } else {
        Some(format!(
            "no cgroup v1 blkio hierarchy at {}",
            crate::host_lab::V1_BLKIO
        ))
    }
}

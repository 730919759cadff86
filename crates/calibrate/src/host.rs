//! Host preparations: root, the loop device over a file target, and the
//! queue settings iocost_coef_gen.py uses while measuring (elevator `none`,
//! `nomerges=1`), each registered for undoing.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use blklab_host::resources::{Resource, Resources};

/// Whether we run as root (the owner of /proc/self is our effective uid).
pub fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Whether a program is on PATH (runs at all).
pub fn have(prog: &str, arg: &str) -> bool {
    Command::new(prog)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `losetup -f --show --direct-io=on FILE`, registered at once. Returns the
/// device path; `dio` tells whether the kernel accepted direct I/O.
pub fn attach_loop(file: &Path, res: &mut Resources) -> Result<(PathBuf, bool), String> {
    let o = Command::new("losetup")
        .args(["-f", "--show", "--direct-io=on"])
        .arg(file)
        .output()
        .map_err(|e| format!("losetup: cannot start: {e}"))?;
    let out = String::from_utf8_lossy(&o.stdout).trim().to_string();
    let dev = PathBuf::from(out.lines().next().unwrap_or("").trim());
    if dev.to_string_lossy().starts_with("/dev/loop") {
        res.add(Resource::Loop(dev.clone()));
    }
    if !o.status.success() || !dev.to_string_lossy().starts_with("/dev/loop") {
        return Err(format!(
            "losetup -f --show --direct-io=on {} failed ({}): {} {}",
            file.display(),
            o.status,
            out,
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    let name = dev
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let dio = std::fs::read_to_string(format!("/sys/block/{name}/loop/dio"))
        .map(|s| s.trim() == "1")
        .unwrap_or(false);
    Ok((dev, dio))
}

/// The active elevator in `queue/scheduler` ("none [mq-deadline]" -> mq-deadline).
pub fn active_elevator(s: &str) -> String {
    match (s.find('['), s.find(']')) {
        (Some(a), Some(b)) if b > a => s[a + 1..b].to_string(),
        _ => s.trim().to_string(),
    }
}

/// Elevator `none` and `nomerges=1`, as iocost_coef_gen.py, restored afterwards.
pub fn quiet_queue(name: &str, res: &mut Resources) -> Result<(), String> {
    let q = PathBuf::from(format!("/sys/class/block/{name}/queue"));
    let sched = q.join("scheduler");
    if let Ok(cur) = std::fs::read_to_string(&sched) {
        let old = active_elevator(&cur);
        if old != "none" {
            std::fs::write(&sched, "none")
                .map_err(|e| format!("writing none to {}: {e}", sched.display()))?;
            res.add(Resource::Sysfs { path: sched, old });
        }
    }
    let nm = q.join("nomerges");
    if let Ok(cur) = std::fs::read_to_string(&nm) {
        let old = cur.trim().to_string();
        if old != "1" {
            std::fs::write(&nm, "1").map_err(|e| format!("writing 1 to {}: {e}", nm.display()))?;
            res.add(Resource::Sysfs { path: nm, old });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn elevator_is_read_from_brackets() {
        assert_eq!(
            super::active_elevator("none [mq-deadline] kyber\n"),
            "mq-deadline"
        );
        assert_eq!(super::active_elevator("[none] mq-deadline"), "none");
        assert_eq!(super::active_elevator("none"), "none");
    }
}

//! What a blklab command creates or changes on a real host (the conformance
//! harness, `blklab calibrate`) is registered here the moment it exists, and
//! undone newest first: when the work ends, when it returns early with an
//! error, and after SIGINT / SIGTERM (the signal handler only raises a flag;
//! the command polls it while fio runs, stops its own fio processes by pid,
//! cleans up and exits). Nothing that was not registered is ever touched, so
//! devices, groups and settings of others stay as they are.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Once;

use signal_hook::consts::{SIGINT, SIGTERM};

/// The number of the signal that arrived (0: none). signal-hook's handler
/// stores it: an atomic store, async-signal-safe.
static SIGNAL: AtomicUsize = AtomicUsize::new(0);
static INSTALL: Once = Once::new();

/// Route SIGINT and SIGTERM to the flag (idempotent).
pub fn install_signal_handlers() {
    INSTALL.call_once(|| {
        for sig in [SIGINT, SIGTERM] {
            // Registration fails only for signals that cannot be caught
            // (SIGKILL, SIGSTOP), which these are not.
            let _ = signal_hook::flag::register_usize(sig, &SIGNAL, sig as usize);
        }
    });
}

/// A flag SIGINT/SIGTERM set from now on (for waits that take a flag, such
/// as a QEMU guest's boot).
pub fn cancel_flag() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(interrupted()));
    for sig in [SIGINT, SIGTERM] {
        let _ = signal_hook::flag::register(sig, flag.clone());
    }
    flag
}

/// Whether SIGINT/SIGTERM arrived.
pub fn interrupted() -> bool {
    SIGNAL.load(Ordering::SeqCst) != 0
}

/// The signal that interrupted us (0 if none).
pub fn signal() -> i32 {
    SIGNAL.load(Ordering::SeqCst) as i32
}

/// One thing a command created or changed.
#[derive(Debug, Clone)]
pub enum Resource {
    /// A backing file on tmpfs.
    File(PathBuf),
    /// A loop device we attached (`/dev/loopN`).
    Loop(PathBuf),
    /// A cgroup directory we made (removed with rmdir; children are
    /// registered after their parent, so reverse order removes them first).
    Cgroup(PathBuf),
    /// blk-iocost configured for MAJ:MIN in this v2 root: on cleanup write
    /// `enable=0` to io.cost.qos and `ctrl=auto` to io.cost.model, as the
    /// kernel keeps the lines otherwise.
    Iocost { root: PathBuf, devno: String },
    /// A sysfs attribute we changed (queue/scheduler, queue/nomerges): the
    /// value to write back.
    Sysfs { path: PathBuf, old: String },
}

/// The registry.
#[derive(Debug, Default)]
pub struct Resources {
    items: Vec<Resource>,
    /// What could not be undone (reported by the caller, never fatal).
    pub problems: Vec<String>,
    /// Print the problems on stderr under this name when the registry is
    /// dropped (for commands that report nothing else about cleanup).
    report_on_drop: Option<&'static str>,
}

impl Resources {
    pub fn new() -> Self {
        Self::default()
    }

    /// A registry that prints what it could not undo when dropped, as
    /// "`who`: cleanup: …".
    pub fn reporting(who: &'static str) -> Self {
        Resources {
            items: Vec::new(),
            problems: Vec::new(),
            report_on_drop: Some(who),
        }
    }

    pub fn add(&mut self, r: Resource) {
        self.items.push(r);
    }

    pub fn loops(&self) -> impl Iterator<Item = &PathBuf> {
        self.items.iter().filter_map(|r| match r {
            Resource::Loop(p) => Some(p),
            _ => None,
        })
    }

    /// Remove everything, newest first. Cgroup directories that are still
    /// busy (a process leaving) are retried for a moment.
    pub fn release(&mut self) {
        while let Some(r) = self.items.pop() {
            if let Err(e) = release_one(&r) {
                self.problems.push(e);
            }
        }
    }
}

impl Drop for Resources {
    fn drop(&mut self) {
        self.release();
        if let Some(who) = self.report_on_drop {
            for p in self.problems.drain(..) {
                eprintln!("{who}: cleanup: {p}");
            }
        }
    }
}

fn release_one(r: &Resource) -> Result<(), String> {
    match r {
        Resource::File(p) => {
            std::fs::remove_file(p).map_err(|e| format!("cannot remove {}: {e}", p.display()))
        }
        Resource::Sysfs { path, old } => {
            // A device that went away takes its attributes with it.
            if !path.exists() {
                return Ok(());
            }
            std::fs::write(path, old)
                .map_err(|e| format!("restoring \"{old}\" to {}: {e}", path.display()))
        }
        Resource::Loop(dev) => {
            // A loop device may stay busy for a moment after fio exits.
            let mut last = String::new();
            for _ in 0..30 {
                match Command::new("losetup").arg("-d").arg(dev).output() {
                    Ok(o) if o.status.success() => return Ok(()),
                    Ok(o) => {
                        last = String::from_utf8_lossy(&o.stderr).trim().to_string();
                        // Already detached (by someone else, or autoclear).
                        if last.contains("No such device") || !dev.exists() {
                            return Ok(());
                        }
                    }
                    Err(e) => last = e.to_string(),
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            Err(format!("losetup -d {}: {last}", dev.display()))
        }
        Resource::Cgroup(p) => {
            let mut last = None;
            for _ in 0..50 {
                match std::fs::remove_dir(p) {
                    Ok(()) => return Ok(()),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                    Err(e) => last = Some(e),
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            Err(format!(
                "cannot remove cgroup {}: {}",
                p.display(),
                last.map(|e| e.to_string()).unwrap_or_default()
            ))
        }
        Resource::Iocost { root, devno } => {
            let mut errs = Vec::new();
            for (file, val) in [
                ("io.cost.qos", format!("{devno} enable=0")),
                ("io.cost.model", format!("{devno} ctrl=auto")),
            ] {
                if let Err(e) = std::fs::write(root.join(file), &val) {
                    errs.push(format!(
                        "writing \"{val}\" to {}/{file}: {e}",
                        root.display()
                    ));
                }
            }
            if errs.is_empty() {
                Ok(())
            } else {
                Err(errs.join("; "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_undoes_newest_first_and_forgets_what_is_gone() {
        let dir = std::env::temp_dir().join(format!("blklab-res-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let attr = dir.join("scheduler");
        std::fs::write(&attr, "mq-deadline").unwrap();
        let file = dir.join("case.img");
        std::fs::write(&file, b"x").unwrap();
        let mut r = Resources::new();
        r.add(Resource::Sysfs {
            path: attr.clone(),
            old: "none".into(),
        });
        r.add(Resource::File(file.clone()));
        // a changed attribute of a device that went away is not an error
        r.add(Resource::Sysfs {
            path: dir.join("gone/scheduler"),
            old: "none".into(),
        });
        r.release();
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        assert!(!file.exists());
        assert_eq!(std::fs::read_to_string(&attr).unwrap(), "none");
        // nothing is undone twice
        std::fs::write(&attr, "bfq").unwrap();
        r.release();
        assert_eq!(std::fs::read_to_string(&attr).unwrap(), "bfq");
        // a file someone else removed is reported, not fatal
        r.add(Resource::File(file.clone()));
        r.release();
        assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! Everything a calibration creates or changes on the host is registered here
//! the moment it exists, and undone newest first when the calibration ends:
//! normally, on an error, or after SIGINT / SIGTERM (signal-hook only raises
//! a flag; the fio loop polls it, stops its fio by pid and returns, and the
//! registry's `Drop` undoes the rest). Nothing that was not registered is
//! touched, so other loop devices stay as they are.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

/// Route SIGINT and SIGTERM to the interruption flag (idempotent).
pub fn install_signal_handlers() {
    let flag = FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // Registration fails only for forbidden signals; these two are allowed.
        let _ = signal_hook::flag::register(sig, Arc::clone(flag));
    }
}

/// Whether SIGINT or SIGTERM arrived since the handlers were installed.
pub fn interrupted() -> bool {
    FLAG.get().is_some_and(|f| f.load(Ordering::SeqCst))
}

/// One thing the calibration created or changed.
#[derive(Debug, Clone)]
pub enum Resource {
    /// A loop device we attached over the user's file (`losetup -d` on release).
    Loop(PathBuf),
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
}

impl Resources {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, r: Resource) {
        self.items.push(r);
    }

    /// Undo everything, newest first.
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
        for p in &self.problems {
            eprintln!("blklab calibrate: cleanup: {p}");
        }
    }
}

fn release_one(r: &Resource) -> Result<(), String> {
    match r {
        Resource::Sysfs { path, old } => {
            // A device that went away takes its attributes with it.
            if !path.exists() {
                return Ok(());
            }
            std::fs::write(path, old)
                .map_err(|e| format!("restoring \"{old}\" to {}: {e}", path.display()))
        }
        Resource::Loop(dev) => {
            // A loop device stays busy for a moment after fio exits.
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
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(format!("losetup -d {}: {last}", dev.display()))
        }
    }
}

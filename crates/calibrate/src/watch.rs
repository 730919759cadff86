//! Noticing that the target went away while fio runs: the file removed,
//! replaced or truncated; the block device removed or resized; a loop device
//! detached (`losetup -d` on a busy loop device only sets its autoclear flag,
//! and the device goes when the last opener closes it, so the flag flipping
//! is the sign). fio itself keeps going on a deleted file's loop device, so
//! without this a calibration would measure a device the user just let go.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
pub struct Watch {
    /// The user's file and its identity (st_dev, st_ino) and size.
    file: Option<(PathBuf, (u64, u64), u64)>,
    /// The block device fio uses: MAJ:MIN, its size, and the loop autoclear
    /// flag as it was when we started.
    devno: String,
    dev_size_bytes: u64,
    loop_autoclear: Option<String>,
}

fn read_trim(p: &str) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

impl Watch {
    pub fn new(file: Option<(&Path, (u64, u64), u64)>, devno: &str) -> Result<Watch, String> {
        let dev_size_bytes = crate::target::block_size_bytes(devno)?;
        Ok(Watch {
            file: file.map(|(p, id, len)| (p.to_path_buf(), id, len)),
            devno: devno.to_string(),
            dev_size_bytes,
            loop_autoclear: read_trim(&format!("/sys/dev/block/{devno}/loop/autoclear")),
        })
    }

    /// `Err(what happened)` when the target is no longer the one we started with.
    pub fn check(&self) -> Result<(), String> {
        if let Some((p, id, len)) = &self.file {
            match std::fs::metadata(p) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return Err(format!("{} was removed", p.display()))
                }
                Err(e) => return Err(format!("{}: {e}", p.display())),
                Ok(md) if (md.dev(), md.ino()) != *id => {
                    return Err(format!("{} was replaced by another file", p.display()))
                }
                Ok(md) if md.len() != *len => {
                    return Err(format!(
                        "{} changed size from {len} to {} bytes (truncated?)",
                        p.display(),
                        md.len()
                    ))
                }
                Ok(_) => {}
            }
        }
        let d = &self.devno;
        match crate::target::block_size_bytes(d) {
            Err(_) => return Err(format!("block device {d} is gone")),
            Ok(0) => return Err(format!("block device {d} has size 0 (detached?)")),
            Ok(s) if s != self.dev_size_bytes => {
                return Err(format!(
                    "block device {d} changed size from {} to {s} bytes",
                    self.dev_size_bytes
                ))
            }
            Ok(_) => {}
        }
        if let Some(old) = &self.loop_autoclear {
            let now = read_trim(&format!("/sys/dev/block/{d}/loop/autoclear"));
            if now.as_deref() != Some(old.as_str()) {
                return Err(format!(
                    "loop device {d} was detached (losetup -d: autoclear {old} -> {})",
                    now.as_deref().unwrap_or("gone")
                ));
            }
            if read_trim(&format!("/sys/dev/block/{d}/loop/backing_file")).is_none() {
                return Err(format!("loop device {d} has no backing file any more"));
            }
        }
        Ok(())
    }
}

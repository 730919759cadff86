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

/// The sysfs file listing the online CPUs (`0-1`, `0,2-5`).
pub const ONLINE_CPUS: &str = "/sys/devices/system/cpu/online";

/// The number of CPUs in a kernel CPU list (`cpulist_parse` syntax:
/// comma-separated numbers and ranges), for `[host] cpus`.
pub fn count_cpu_list(list: &str) -> Option<u32> {
    let mut n = 0u32;
    for part in list.trim().split(',') {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?),
            None => {
                let a = part.trim().parse::<u32>().ok()?;
                (a, a)
            }
        };
        if b < a {
            return None;
        }
        n = n.checked_add(b - a + 1)?;
    }
    (n > 0).then_some(n)
}

/// The host's online CPUs, read from `path` (normally [`ONLINE_CPUS`]);
/// an error names the file.
pub fn online_cpus(path: &Path) -> Result<u32, String> {
    let s = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read the online CPUs: {e}", path.display()))?;
    count_cpu_list(&s).ok_or_else(|| {
        format!(
            "{}: '{}' is not a CPU list (expected e.g. 0-1 or 0,2-3)",
            path.display(),
            s.trim()
        )
    })
}

/// The filesystem type holding `path`: the mount point of
/// /proc/self/mountinfo (field 5) that is the longest prefix of it, and
/// that line's type (the field after ` - `).
pub fn fs_type_of(mountinfo: &str, path: &Path) -> Option<String> {
    let mut best: Option<(usize, String)> = None;
    for l in mountinfo.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        let Some(dash) = f.iter().position(|x| *x == "-") else {
            continue;
        };
        let (Some(mnt), Some(ty)) = (f.get(4), f.get(dash + 1)) else {
            continue;
        };
        if path.starts_with(mnt) && best.as_ref().is_none_or(|(n, _)| mnt.len() >= *n) {
            best = Some((mnt.len(), ty.to_string()));
        }
    }
    best.map(|(_, t)| t)
}

/// The file under loop device `name` when its speed is CPU time: a file on
/// tmpfs, or a file on another file system read and written through the
/// page cache (`loop/dio` 0: losetup's default). None for a loop with
/// direct I/O (its file system's device sets the pace) or no loop at all.
pub fn loop_file(name: &str) -> Option<crate::fit::LoopFile> {
    let sys = format!("/sys/block/{name}/loop");
    let f = std::fs::read_to_string(format!("{sys}/backing_file")).ok()?;
    let mi = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    if fs_type_of(&mi, Path::new(f.trim())).as_deref() == Some("tmpfs") {
        return Some(crate::fit::LoopFile::Tmpfs);
    }
    let dio = std::fs::read_to_string(format!("{sys}/dio")).ok()?;
    (dio.trim() == "0").then_some(crate::fit::LoopFile::Cached)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn cpu_lists_are_counted_and_a_bad_file_is_named() {
        assert_eq!(super::count_cpu_list("0-1\n"), Some(2));
        assert_eq!(super::count_cpu_list("0,2-5,7"), Some(6));
        assert_eq!(super::count_cpu_list("0"), Some(1));
        assert_eq!(super::count_cpu_list("3-1"), None);
        assert_eq!(super::count_cpu_list(""), None);
        let e = super::online_cpus(Path::new("/nonexistent/cpu/online")).unwrap_err();
        assert!(e.starts_with("/nonexistent/cpu/online: cannot read"), "{e}");
        let dir = std::env::temp_dir().join(format!("blklab-cal-cpus-{}", std::process::id()));
        std::fs::write(&dir, "zero-one\n").unwrap();
        let e = super::online_cpus(&dir).unwrap_err();
        let _ = std::fs::remove_file(&dir);
        assert!(e.contains("'zero-one' is not a CPU list"), "{e}");
    }

    #[test]
    fn the_filesystem_of_a_path_is_its_longest_mount() {
        let mi = "22 1 254:1 / / rw - ext4 /dev/vda1 rw\n\
                  30 22 0:25 / /dev/shm rw - tmpfs tmpfs rw\n\
                  31 22 0:26 / /dev/shmx rw - ext4 x rw\n";
        let t = |p: &str| super::fs_type_of(mi, Path::new(p));
        assert_eq!(t("/dev/shm/disk.img").as_deref(), Some("tmpfs"));
        assert_eq!(t("/root/disk.img").as_deref(), Some("ext4"));
        assert_eq!(t("/dev/shmx/a").as_deref(), Some("ext4"));
    }

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

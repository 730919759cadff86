//! The calibration target: a block device or a regular file, what it is, and
//! whether it may be used. A mounted device, one held by another device
//! (dm, md, a partition in use) and one with a known on-disk signature are
//! refused: the first two always, the last unless `--destructive`.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// What the user named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetKind {
    /// A regular file: the user's scratch file, measured through a loop
    /// device we attach over it with direct I/O.
    File,
    /// A block device, measured directly.
    Block,
}

#[derive(Debug, Clone)]
pub struct Target {
    pub path: PathBuf,
    pub kind: TargetKind,
    /// Size in bytes (the file's, or the device's).
    pub size_bytes: u64,
    /// Identity of a file target (st_dev, st_ino), to notice its removal.
    pub file_id: Option<(u64, u64)>,
}

/// Linux `major()` / `minor()` of a dev_t (glibc's encoding).
pub fn dev_major_minor(rdev: u64) -> (u32, u32) {
    let major = ((rdev >> 8) & 0xfff) | ((rdev >> 32) & !0xfff);
    let minor = (rdev & 0xff) | ((rdev >> 12) & !0xff);
    (major as u32, minor as u32)
}

/// The kernel name (`loop3`, `vda`) and MAJ:MIN of a block device node.
pub fn block_identity(path: &Path) -> Result<(String, String), String> {
    let md = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !md.file_type().is_block_device() {
        return Err(format!("{} is not a block device", path.display()));
    }
    let (ma, mi) = dev_major_minor(md.rdev());
    let devno = format!("{ma}:{mi}");
    let link = std::fs::read_link(format!("/sys/dev/block/{devno}"))
        .map_err(|e| format!("/sys/dev/block/{devno} (for {}): {e}", path.display()))?;
    let name = link
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .ok_or_else(|| format!("/sys/dev/block/{devno}: no device name"))?;
    Ok((name, devno))
}

/// Device size from sysfs (`size` counts 512-byte sectors whatever the block size).
pub fn block_size_bytes(devno: &str) -> Result<u64, String> {
    let p = format!("/sys/dev/block/{devno}/size");
    let s = std::fs::read_to_string(&p).map_err(|e| format!("{p}: {e}"))?;
    s.trim()
        .parse::<u64>()
        .map(|n| n * 512)
        .map_err(|e| format!("{p}: '{}' is not a number: {e}", s.trim()))
}

/// Mount points (field 5 of /proc/self/mountinfo) of the filesystems whose
/// device (field 3, MAJ:MIN) is one of `devnos`.
pub fn mounts_of(mountinfo: &str, devnos: &[String]) -> Vec<String> {
    mountinfo
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() > 4 && devnos.iter().any(|d| d == f[2])).then(|| f[4].to_string())
        })
        .collect()
}

/// The device and its partitions (`/sys/block/NAME/NAMEpN/dev`), as MAJ:MIN.
fn device_and_partitions(name: &str, devno: &str) -> Vec<String> {
    let mut v = vec![devno.to_string()];
    if let Ok(rd) = std::fs::read_dir(format!("/sys/class/block/{name}")) {
        for e in rd.flatten() {
            let sub = e.file_name().to_string_lossy().to_string();
            if sub.starts_with(name) {
                if let Ok(d) = std::fs::read_to_string(e.path().join("dev")) {
                    v.push(d.trim().to_string());
                }
            }
        }
    }
    v
}

/// Devices stacked on this one (dm, md, bcache): `/sys/class/block/NAME/holders`.
fn holders(name: &str) -> Vec<String> {
    std::fs::read_dir(format!("/sys/class/block/{name}/holders"))
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// A known signature in the first bytes of a device, as blkid would name it.
/// `head` should hold at least the first 68 KiB (btrfs' superblock is at 64 KiB).
/// Checked: ext2/3/4, XFS, btrfs, swap, LUKS, vfat/NTFS boot sectors and
/// partition tables (MBR, GPT).
pub fn signature(head: &[u8]) -> Option<&'static str> {
    let at = |off: usize, magic: &[u8]| head.get(off..off + magic.len()) == Some(magic);
    if at(0, b"LUKS\xba\xbe") {
        return Some("crypto_LUKS");
    }
    if at(0, b"XFSB") {
        return Some("xfs");
    }
    if at(1024 + 0x38, &[0x53, 0xef]) {
        return Some("ext2/3/4");
    }
    if at(65536 + 0x40, b"_BHRfS_M") {
        return Some("btrfs");
    }
    // Swap's magic ends the first page; pages of 4 KiB to 64 KiB.
    for page in [4096usize, 8192, 16384, 65536] {
        if at(page - 10, b"SWAPSPACE2") || at(page - 10, b"SWAP-SPACE") {
            return Some("swap");
        }
    }
    if at(512, b"EFI PART") {
        return Some("gpt partition table");
    }
    if at(3, b"NTFS    ") {
        return Some("ntfs");
    }
    if at(54, b"FAT1") || at(82, b"FAT32   ") {
        return Some("vfat");
    }
    if at(510, &[0x55, 0xaa]) {
        return Some("dos partition table (boot signature 55aa)");
    }
    None
}

fn read_head(path: &Path) -> Result<Vec<u8>, String> {
    let mut f = File::open(path).map_err(|e| format!("opening {} to read: {e}", path.display()))?;
    let mut buf = Vec::with_capacity(69632);
    (&mut f)
        .take(69632)
        .read_to_end(&mut buf)
        .map_err(|e| format!("reading {}: {e}", path.display()))?;
    Ok(buf)
}

/// Resolve and check the target. Refusals are `Err((true, why))` (the host
/// cannot run this: exit 4); other problems `Err((false, why))`.
pub fn resolve(path: &Path, destructive: bool) -> Result<Target, (bool, String)> {
    let md = std::fs::metadata(path).map_err(|e| (false, format!("{}: {e}", path.display())))?;
    let ft = md.file_type();
    if ft.is_file() {
        if md.len() < 16 << 20 {
            return Err((
                true,
                format!(
                    "{}: {} bytes; a file target needs at least 16 MiB (e.g. fallocate -l 1G {})",
                    path.display(),
                    md.len(),
                    path.display()
                ),
            ));
        }
        return Ok(Target {
            path: path.to_path_buf(),
            kind: TargetKind::File,
            size_bytes: md.len(),
            file_id: Some((md.dev(), md.ino())),
        });
    }
    if !ft.is_block_device() {
        return Err((
            true,
            format!(
                "{}: neither a block device nor a regular file",
                path.display()
            ),
        ));
    }
    let (name, devno) = block_identity(path).map_err(|e| (false, e))?;
    let all = device_and_partitions(&name, &devno);
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| (false, format!("/proc/self/mountinfo: {e}")))?;
    let mounts = mounts_of(&mountinfo, &all);
    if !mounts.is_empty() {
        return Err((
            true,
            format!(
                "{} ({name}, {devno}) is mounted on {}: refusing to measure a mounted device",
                path.display(),
                mounts.join(", ")
            ),
        ));
    }
    let held = holders(&name);
    if !held.is_empty() {
        return Err((
            true,
            format!(
                "{} ({name}) is held by {}: refusing to measure a device another device uses",
                path.display(),
                held.join(", ")
            ),
        ));
    }
    let head = read_head(path).map_err(|e| (false, e))?;
    if let Some(sig) = signature(&head) {
        if !destructive {
            return Err((
                true,
                format!(
                    "{} ({name}) has a {sig} signature: refusing without --destructive (the write tests would destroy it)",
                    path.display()
                ),
            ));
        }
    }
    let size_bytes = block_size_bytes(&devno).map_err(|e| (false, e))?;
    Ok(Target {
        path: path.to_path_buf(),
        kind: TargetKind::Block,
        size_bytes,
        file_id: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn img(len: usize, writes: &[(usize, &[u8])]) -> Vec<u8> {
        let mut v = vec![0u8; len];
        for (off, b) in writes {
            v[*off..*off + b.len()].copy_from_slice(b);
        }
        v
    }

    #[test]
    fn signatures_are_recognised() {
        let n = 69632;
        assert_eq!(signature(&img(n, &[])), None);
        assert_eq!(
            signature(&img(n, &[(1080, &[0x53, 0xef])])),
            Some("ext2/3/4")
        );
        assert_eq!(signature(&img(n, &[(0, b"XFSB")])), Some("xfs"));
        assert_eq!(signature(&img(n, &[(65600, b"_BHRfS_M")])), Some("btrfs"));
        assert_eq!(signature(&img(n, &[(4086, b"SWAPSPACE2")])), Some("swap"));
        assert_eq!(
            signature(&img(n, &[(0, b"LUKS\xba\xbe")])),
            Some("crypto_LUKS")
        );
        assert_eq!(
            signature(&img(n, &[(512, b"EFI PART"), (510, &[0x55, 0xaa])])),
            Some("gpt partition table")
        );
        assert_eq!(
            signature(&img(n, &[(82, b"FAT32   "), (510, &[0x55, 0xaa])])),
            Some("vfat")
        );
        assert!(signature(&img(n, &[(510, &[0x55, 0xaa])]))
            .unwrap()
            .contains("dos"));
        // A short read (tiny device) does not panic.
        assert_eq!(signature(&[0u8; 100]), None);
    }

    #[test]
    fn mountinfo_is_matched_by_device_number() {
        let mi = "22 27 0:21 / /proc rw - proc proc rw\n\
                  27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n\
                  90 27 7:3 / /mnt/x rw - ext4 /dev/loop3 rw\n";
        assert_eq!(mounts_of(mi, &["254:0".into()]), vec!["/"]);
        assert_eq!(mounts_of(mi, &["7:4".into(), "7:3".into()]), vec!["/mnt/x"]);
        assert!(mounts_of(mi, &["7:5".into()]).is_empty());
    }

    #[test]
    fn dev_t_decoding() {
        assert_eq!(dev_major_minor(0xfe00), (254, 0));
        assert_eq!(dev_major_minor((7 << 8) | 3), (7, 3));
        // glibc makedev(259, 300) = 0x11032c (minor's high bits above bit 20).
        assert_eq!(dev_major_minor(0x11032c), (259, 300));
    }
}

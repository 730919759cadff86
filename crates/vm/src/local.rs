//! Kernels the user built: `local:DIR` boots the bzImage of a kernel build
//! tree (or of any directory holding a bzImage and its .config) in the same
//! harness as the pinned kernels, so a patched blk-iocost, blk-throttle or
//! bfq can be checked against the simulator case by case.
//!
//! Nothing is cached or copied: the image and config are read where they
//! are, each time. The guest loads no module from a local kernel (the
//! harness carries modules only from Debian packages), so what the harness
//! itself needs must be built in; what a case needs (a controller, a
//! scheduler) is checked per case, as for every kernel. Building with the
//! harness's own fragment gives a kernel that has everything:
//! `make ARCH=x86_64 KCONFIG_ALLCONFIG=blklab.config allnoconfig` with the
//! fragment `blklab conformance --kconfig-fragment` prints.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{Result, VmError};
use crate::kconfig;
use crate::kernels::{self, Kernel, KernelPin};
use crate::kmod::{self, Tristate};

/// What a kernel name starts with to name a local kernel.
pub const PREFIX: &str = "local:";

/// Where the image is looked for in DIR, in order: a build tree's, then a
/// directory holding the image itself.
const IMAGES: &[&str] = &["arch/x86/boot/bzImage", "bzImage", "vmlinuz"];

/// Where the config is looked for in DIR, in order.
const CONFIGS: &[&str] = &[".config", "config"];

/// Symbols of the fragment a local kernel may set as it likes: how it
/// preempts and ticks (part of what is being tested), and the ones each case
/// checks for itself (a case the kernel cannot run is reported as such).
const FREE: &[&str] = &[
    "CONFIG_PREEMPT_VOLUNTARY",
    "CONFIG_NO_HZ_IDLE",
    "CONFIG_HIGH_RES_TIMERS",
    "CONFIG_BLK_DEV_THROTTLING",
    "CONFIG_BLK_CGROUP_IOCOST",
    "CONFIG_BLK_CGROUP_IOLATENCY",
    "CONFIG_BLK_CGROUP_IOPRIO",
    "CONFIG_BLK_WBT",
    "CONFIG_BLK_WBT_MQ",
    "CONFIG_MQ_IOSCHED_DEADLINE",
    "CONFIG_MQ_IOSCHED_KYBER",
    "CONFIG_IOSCHED_BFQ",
    "CONFIG_BFQ_GROUP_IOSCHED",
    "CONFIG_MODULES",
];

/// The bytes of the image read to find its version string: the real-mode
/// setup code, which holds it, is at most 64 sectors of 512 bytes past the
/// boot sector (`setup_sects`).
const HEADER_BYTES: u64 = 65 * 512;

/// DIR of a `local:DIR` kernel name (None for any other name).
pub fn dir_of(name: &str) -> Option<&Path> {
    name.strip_prefix(PREFIX).map(Path::new)
}

/// A local build tree as read and checked: what `load` boots, and what the
/// simulator's side needs before any boot (series, HZ), without making a
/// kernel of it.
#[derive(Debug, Clone)]
pub struct Tree {
    pub image: PathBuf,
    /// `uname -r`, from the image's boot header.
    pub release: String,
    /// The tree's .config, parsed.
    pub config: BTreeMap<String, String>,
}

impl Tree {
    /// The series of its release (`major.minor`).
    pub fn series(&self) -> String {
        kernels::series_of(&self.release)
    }

    /// CONFIG_HZ.
    pub fn hz(&self) -> Option<u32> {
        kernels::config_hz(&self.config)
    }
}

/// The tree `local:DIR`: its image and config found, read and checked.
pub fn read(dir: &Path) -> Result<Tree> {
    let bad = |reason: String| VmError::BadLocal {
        dir: dir.to_path_buf(),
        reason,
    };
    if !dir.is_dir() {
        return Err(bad("not a directory".into()));
    }
    let find = |names: &[&str]| names.iter().map(|n| dir.join(n)).find(|p| p.is_file());
    let image = find(IMAGES).ok_or_else(|| {
        bad(format!(
            "no kernel image: looked for {} (build one with `make bzImage`)",
            IMAGES.join(", ")
        ))
    })?;
    let config_path = find(CONFIGS).ok_or_else(|| {
        bad(format!(
            "no kernel config: looked for {}",
            CONFIGS.join(", ")
        ))
    })?;
    let release = image_release(&image).map_err(|e| bad(format!("{}: {e}", image.display())))?;
    let text = std::fs::read_to_string(&config_path)
        .map_err(|e| VmError::io(format!("reading {}", config_path.display()), e))?;
    let config = kmod::parse_config(&text);
    let lacking = lacking(&config);
    if !lacking.is_empty() {
        return Err(bad(format!(
            "{} lacks what the harness needs built in: {} (a local kernel's modules are not loaded; \
             the fragment of `blklab conformance --kconfig-fragment` has them all)",
            config_path.display(),
            kconfig::describe_mismatches(&lacking)
        )));
    }
    Ok(Tree {
        image,
        release,
        config,
    })
}

/// The kernel `local:DIR`, ready to boot (`read`, then its pin).
pub fn load(dir: &Path) -> Result<Kernel> {
    let t = read(dir)?;
    let pin = KernelPin {
        name: leak(format!("{PREFIX}{}", dir.display())),
        package: "local-build",
        version: leak(t.release.clone()),
        deb_sha256: "",
        suite: "",
        release: leak(t.release),
        build: None,
    };
    Ok(Kernel {
        pin,
        dir: dir.to_path_buf(),
        vmlinuz: t.image,
        config: t.config,
        modules: Vec::new(),
    })
}

/// A `KernelPin` holds `'static` names (the registry's are constants); a
/// local kernel's are made by `load`, once per boot (the simulator's side
/// uses `read`), and live for the process.
fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// The fragment's symbols a local kernel must have as the fragment sets
/// them, with what it has: (symbol, wanted, found).
fn lacking(config: &BTreeMap<String, String>) -> Vec<(String, String, String)> {
    kmod::parse_config(kconfig::FRAGMENT)
        .into_iter()
        .filter(|(sym, want)| want == "y" && !FREE.contains(&sym.as_str()))
        .filter_map(|(sym, want)| {
            let have = kmod::tristate(config, &sym);
            (have != Tristate::Yes).then(|| (sym, want, have.as_str().to_string()))
        })
        .collect()
}

/// `uname -r` of a bzImage: the first word of the version string the x86
/// boot protocol's setup header points to (`kernel_version`, offset 0x20e,
/// an offset from 0x200; the header is marked "HdrS" at 0x202, protocol
/// 2.00 and later). Documentation/arch/x86/boot.rst.
pub fn image_release(image: &Path) -> std::result::Result<String, String> {
    let f = std::fs::File::open(image).map_err(|e| e.to_string())?;
    let mut head = Vec::new();
    f.take(HEADER_BYTES)
        .read_to_end(&mut head)
        .map_err(|e| e.to_string())?;
    release_from_header(&head)
}

/// `image_release` on the image's first bytes.
pub fn release_from_header(head: &[u8]) -> std::result::Result<String, String> {
    let not = || "not an x86 bzImage (no \"HdrS\" boot header at 0x202)".to_string();
    if head.get(0x202..0x206) != Some(b"HdrS".as_slice()) {
        return Err(not());
    }
    let field = head.get(0x20e..0x210).ok_or_else(not)?;
    let at = 0x200 + u16::from_le_bytes([field[0], field[1]]) as usize;
    let s = head
        .get(at..)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| format!("its version string pointer ({at:#x}) is past the setup code"))?;
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    let version = String::from_utf8_lossy(&s[..end]);
    let release = version.split_whitespace().next().unwrap_or("");
    if !release.starts_with(|c: char| c.is_ascii_digit()) || !release.contains('.') {
        return Err(format!("its version string {version:?} names no release"));
    }
    Ok(release.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A setup header whose version string is `v`.
    fn header(v: &str) -> Vec<u8> {
        let mut h = vec![0u8; 0x400];
        h[0x202..0x206].copy_from_slice(b"HdrS");
        let at: u16 = 0x300 - 0x200;
        h[0x20e..0x210].copy_from_slice(&at.to_le_bytes());
        h[0x300..0x300 + v.len()].copy_from_slice(v.as_bytes());
        h
    }

    /// A config with every symbol the harness needs built in.
    fn good_config() -> String {
        kconfig::FRAGMENT.to_string()
    }

    #[test]
    fn the_release_is_read_from_the_boot_header() {
        let h = header("6.12.0-rc3-iocost-fix+ (me@box) #7 SMP PREEMPT_DYNAMIC");
        assert_eq!(release_from_header(&h).unwrap(), "6.12.0-rc3-iocost-fix+");
        let mut plain = h.clone();
        plain[0x202] = b'X';
        assert!(release_from_header(&plain)
            .unwrap_err()
            .contains("not an x86 bzImage"));
        assert!(release_from_header(&h[..0x100])
            .unwrap_err()
            .contains("HdrS"));
        let mut far = header("6.1.0 x");
        far[0x20e..0x210].copy_from_slice(&0x7000u16.to_le_bytes());
        assert!(release_from_header(&far)
            .unwrap_err()
            .contains("past the setup code"));
        assert!(release_from_header(&header("garbage"))
            .unwrap_err()
            .contains("names no release"));
    }

    #[test]
    fn a_build_tree_loads_with_its_series_and_hz() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("arch/x86/boot")).unwrap();
        std::fs::write(
            d.path().join("arch/x86/boot/bzImage"),
            header("6.13.2-mine (a@b) #1 SMP"),
        )
        .unwrap();
        std::fs::write(d.path().join(".config"), good_config() + "CONFIG_HZ=300\n").unwrap();
        let k = load(d.path()).unwrap();
        assert_eq!(k.pin.release, "6.13.2-mine");
        assert_eq!(k.pin.series(), "6.13");
        assert_eq!(k.hz(), Some(300));
        assert!(k.pin.name.starts_with(PREFIX));
        assert_eq!(dir_of(k.pin.name), Some(d.path()));
        assert!(k.modules.is_empty());
    }

    #[test]
    fn what_the_harness_needs_must_be_built_in() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("bzImage"), header("6.6.1 #1")).unwrap();
        let config = good_config()
            .replace("CONFIG_BLK_DEV_LOOP=y", "CONFIG_BLK_DEV_LOOP=m")
            .replace("CONFIG_DEVTMPFS=y\n", "")
            // a case's own symbol may be off: the case says so when run
            .replace("CONFIG_BLK_CGROUP_IOCOST=y\n", "");
        std::fs::write(d.path().join("config"), config).unwrap();
        let e = load(d.path()).unwrap_err().to_string();
        assert!(e.contains("CONFIG_BLK_DEV_LOOP=y (got m)"), "{e}");
        assert!(e.contains("CONFIG_DEVTMPFS=y (got n)"), "{e}");
        assert!(!e.contains("IOCOST"), "{e}");
    }

    #[test]
    fn a_missing_image_or_config_is_named() {
        let d = tempfile::tempdir().unwrap();
        let e = load(d.path()).unwrap_err().to_string();
        assert!(
            e.contains("no kernel image") && e.contains("arch/x86/boot/bzImage"),
            "{e}"
        );
        std::fs::write(d.path().join("vmlinuz"), header("6.6.1 #1")).unwrap();
        let e = load(d.path()).unwrap_err().to_string();
        assert!(
            e.contains("no kernel config: looked for .config, config"),
            "{e}"
        );
        std::fs::write(d.path().join("config"), good_config()).unwrap();
        std::fs::write(d.path().join("vmlinuz"), b"\x7fELF not a bzImage").unwrap();
        let e = load(d.path()).unwrap_err().to_string();
        assert!(e.contains("not an x86 bzImage"), "{e}");
        let e = load(&d.path().join("nope")).unwrap_err().to_string();
        assert!(e.contains("not a directory"), "{e}");
    }
}

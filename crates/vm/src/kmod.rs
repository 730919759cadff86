//! Kernel modules a guest needs, taken from an unpacked kernel package.
//!
//! Debian's kernel packages ship no modules.dep (depmod runs at install
//! time), so dependencies are read from each module's own `.modinfo`
//! `depends=` string, as modinfo(8) prints them. Modules compressed with xz
//! (trixie ships `*.ko.xz`) are decompressed on the host, so the guest's
//! busybox insmod needs no decompressor.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{Result, VmError};

/// A module's configuration symbol and its name (the file stem).
pub const WANTED: &[(&str, &str)] = &[
    ("CONFIG_BLK_DEV_LOOP", "loop"),
    ("CONFIG_IOSCHED_BFQ", "bfq"),
    ("CONFIG_MQ_IOSCHED_DEADLINE", "mq-deadline"),
];

/// Largest module file accepted (compressed or not).
const MAX_MODULE_BYTES: u64 = 64 << 20;

/// Whether a symbol is built in, a module, or absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tristate {
    Yes,
    Module,
    No,
}

impl Tristate {
    pub fn as_str(self) -> &'static str {
        match self {
            Tristate::Yes => "y",
            Tristate::Module => "m",
            Tristate::No => "n",
        }
    }
}

/// Parse a kernel .config: `CONFIG_X=y|m|"…"|number`; `# CONFIG_X is not set`.
pub fn parse_config(text: &str) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for l in text.lines() {
        if let Some(rest) = l.strip_prefix("# ") {
            if let Some(sym) = rest.strip_suffix(" is not set") {
                m.insert(sym.to_string(), "n".to_string());
            }
        } else if let Some((k, v)) = l.split_once('=') {
            if k.starts_with("CONFIG_") {
                m.insert(k.to_string(), v.to_string());
            }
        }
    }
    m
}

/// The tristate of `sym` in a parsed config (absent = No).
pub fn tristate(config: &BTreeMap<String, String>, sym: &str) -> Tristate {
    match config.get(sym).map(String::as_str) {
        Some("y") => Tristate::Yes,
        Some("m") => Tristate::Module,
        _ => Tristate::No,
    }
}

/// The `depends=` list of a module image (names, comma separated in the
/// `.modinfo` section, which holds NUL-separated `key=value` strings).
pub fn depends(image: &[u8]) -> Vec<String> {
    let key = b"\0depends=";
    let Some(at) = image.windows(key.len()).position(|w| w == key) else {
        return Vec::new();
    };
    let start = at + key.len();
    let end = image[start..]
        .iter()
        .position(|&b| b == 0)
        .map_or(image.len(), |n| start + n);
    String::from_utf8_lossy(&image[start..end])
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Read a module file, decompressing `.ko.xz`. Checks the ELF magic.
pub fn read_module(path: &Path) -> Result<Vec<u8>> {
    let f = std::fs::File::open(path)
        .map_err(|e| VmError::io(format!("opening {}", path.display()), e))?;
    let mut raw = Vec::new();
    f.take(MAX_MODULE_BYTES + 1)
        .read_to_end(&mut raw)
        .map_err(|e| VmError::io(format!("reading {}", path.display()), e))?;
    if raw.len() as u64 > MAX_MODULE_BYTES {
        return Err(VmError::TooLarge {
            what: format!("module {}", path.display()),
            limit_bytes: MAX_MODULE_BYTES,
        });
    }
    let image = if path.extension().is_some_and(|e| e == "xz") {
        let mut out = Vec::new();
        lzma_rs::xz_decompress(&mut raw.as_slice(), &mut out).map_err(|e| {
            VmError::io(
                format!("decompressing {}", path.display()),
                std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
            )
        })?;
        out
    } else {
        raw
    };
    if !image.starts_with(b"\x7fELF") {
        return Err(VmError::io(
            format!("{}", path.display()),
            std::io::Error::new(std::io::ErrorKind::InvalidData, "not an ELF module"),
        ));
    }
    Ok(image)
}

/// Index every module file under `modules_dir` by name (`loop` for
/// `…/loop.ko` or `…/loop.ko.xz`; modinfo treats `-` and `_` alike).
pub fn index(modules_dir: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![modules_dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let name = p.file_name().map(|n| n.to_string_lossy().to_string());
            if let Some(stem) = name.as_deref().and_then(|n| {
                n.strip_suffix(".ko.xz")
                    .or_else(|| n.strip_suffix(".ko.zst"))
                    .or_else(|| n.strip_suffix(".ko"))
            }) {
                out.insert(stem.replace('_', "-"), p);
            }
        }
    }
    out
}

/// A module ready for the initramfs: its name and decompressed image.
#[derive(Debug, Clone)]
pub struct Module {
    pub name: String,
    pub image: Vec<u8>,
}

/// The wanted modules that are `=m` in `config`, with their dependencies,
/// in load order (dependencies first).
pub fn resolve(
    config: &BTreeMap<String, String>,
    modules_dir: &Path,
    package: &str,
) -> Result<Vec<Module>> {
    let idx = index(modules_dir);
    let mut order = Vec::new();
    let mut done = BTreeSet::new();
    for (sym, name) in WANTED {
        if tristate(config, sym) == Tristate::Module {
            visit(name, &idx, &mut done, &mut order, package, 0)?;
        }
    }
    Ok(order)
}

fn visit(
    name: &str,
    idx: &BTreeMap<String, PathBuf>,
    done: &mut BTreeSet<String>,
    order: &mut Vec<Module>,
    package: &str,
    depth: usize,
) -> Result<()> {
    let key = name.replace('_', "-");
    if done.contains(&key) {
        return Ok(());
    }
    if depth > 32 {
        return Err(VmError::BadPackage {
            package: package.into(),
            reason: format!("module dependencies of {name} nest deeper than 32"),
        });
    }
    let path = idx.get(&key).ok_or_else(|| VmError::BadPackage {
        package: package.into(),
        reason: format!("module {name} is configured =m but its file is missing"),
    })?;
    let image = read_module(path)?;
    done.insert(key.clone());
    for dep in depends(&image) {
        visit(&dep, idx, done, order, package, depth + 1)?;
    }
    order.push(Module { name: key, image });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_symbols() {
        let c = parse_config(
            "CONFIG_HZ=250\nCONFIG_BLK_DEV_LOOP=m\n# CONFIG_BLK_CGROUP_IOLATENCY is not set\nCONFIG_BLK_CGROUP_IOCOST=y\nCONFIG_X=\"s\"\n",
        );
        assert_eq!(c["CONFIG_HZ"], "250");
        assert_eq!(tristate(&c, "CONFIG_BLK_DEV_LOOP"), Tristate::Module);
        assert_eq!(tristate(&c, "CONFIG_BLK_CGROUP_IOLATENCY"), Tristate::No);
        assert_eq!(tristate(&c, "CONFIG_BLK_CGROUP_IOCOST"), Tristate::Yes);
        assert_eq!(tristate(&c, "CONFIG_ABSENT"), Tristate::No);
    }

    #[test]
    fn depends_field() {
        let img = b"\x7fELF....\0license=GPL\0depends=crc32c_generic,libcrc\0vermagic=6.1\0";
        assert_eq!(depends(img), ["crc32c_generic", "libcrc"]);
        assert!(depends(b"\x7fELF\0depends=\0vermagic=x\0").is_empty());
        assert!(depends(b"\x7fELF no modinfo").is_empty());
    }

    /// Dependencies load first; a shared dependency loads once; xz images
    /// are decompressed.
    #[test]
    fn resolve_orders_dependencies_and_decompresses_xz() {
        let dir = tempfile::tempdir().unwrap();
        let k = dir.path().join("kernel/block");
        std::fs::create_dir_all(&k).unwrap();
        std::fs::write(k.join("loop.ko"), b"\x7fELF\0depends=base_x\0").unwrap();
        std::fs::write(k.join("base_x.ko"), b"\x7fELF\0depends=\0").unwrap();
        let mut xz = Vec::new();
        lzma_rs::xz_compress(&mut &b"\x7fELF\0depends=base-x\0"[..], &mut xz).unwrap();
        std::fs::write(k.join("bfq.ko.xz"), xz).unwrap();
        let c = parse_config(
            "CONFIG_BLK_DEV_LOOP=m\nCONFIG_IOSCHED_BFQ=m\nCONFIG_MQ_IOSCHED_DEADLINE=y\n",
        );
        let m = resolve(&c, dir.path(), "pkg").unwrap();
        let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["base-x", "loop", "bfq"]);
        assert_eq!(m[2].image, b"\x7fELF\0depends=base-x\0");
    }

    #[test]
    fn missing_module_file_is_a_package_error() {
        let dir = tempfile::tempdir().unwrap();
        let c = parse_config("CONFIG_BLK_DEV_LOOP=m\n");
        let e = resolve(&c, dir.path(), "pkg").unwrap_err();
        assert!(e.to_string().contains("module loop"), "{e}");
    }
}

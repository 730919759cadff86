//! The registry of guest kernels: stock Debian cloud kernels, each pinned to
//! one exact package version, fetched once into a cache with a private apt
//! configuration (see `apt`), unpacked with `dpkg-deb -x`, and verified by
//! sha256 every time the cache is used again; and kernels built here from
//! Debian's pinned kernel source package (see `kbuild`), cached the same way.
//!
//! Cache layout (`<cache>/<name>/`): `package.deb` (the pinned .deb),
//! `vmlinuz`, `config`, `modules/<module>.ko` (decompressed) and `manifest`
//! (the sha256 of every file, and the module load order). An entry appears
//! under its final name only when complete: it is assembled in a temporary
//! directory inside the cache and renamed; a failed fetch leaves nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::apt::{self, PrivateApt};
pub use crate::digest::{sha256_bytes, sha256_file};
use crate::error::{Result, VmError};
use crate::kconfig::{self, BuildSpec, Source};
use crate::kmod::{self, Tristate};
use crate::tools;

/// One pinned kernel package.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelPin {
    /// The name callers use, e.g. `debian-6.12`.
    pub name: &'static str,
    /// The exact Debian binary package.
    pub package: &'static str,
    /// The exact package version.
    pub version: &'static str,
    /// sha256 of the .deb (as in the archive's Packages index).
    pub deb_sha256: &'static str,
    /// The Debian suite that carries it.
    pub suite: &'static str,
    /// `uname -r` of the kernel (names its files in a stock package).
    pub release: &'static str,
    /// Built from the source package `package` with this spec (None: a
    /// stock binary package).
    pub build: Option<BuildSpec>,
}

impl KernelPin {
    /// The kernel series, `major.minor` of the release (e.g. `6.1`): the
    /// simulator's kernel profile for it.
    pub fn series(&self) -> String {
        series_of(self.release)
    }
}

/// The series of a release (`uname -r`): its `major.minor`.
pub fn series_of(release: &str) -> String {
    release
        .split(['.', '-', '+'])
        .take(2)
        .collect::<Vec<_>>()
        .join(".")
}

/// CONFIG_HZ of a parsed config.
pub fn config_hz(config: &BTreeMap<String, String>) -> Option<u32> {
    config.get("CONFIG_HZ").and_then(|v| v.parse().ok())
}

/// The Debian source package of 6.1 the built kernels use: bookworm's, the
/// version of the stock debian-6.1 kernel.
const SOURCE_6_1: KernelPin = KernelPin {
    name: "",
    package: "linux-source-6.1",
    version: "6.1.176-1",
    deb_sha256: "9305d1a151b8e83dcb88aa11361e7b9513f0c252bdf7f5647e4542762d99c094",
    suite: "bookworm",
    release: "",
    build: None,
};

/// The kernels, pinned to what the archive offered when they were added
/// (2026-11): bookworm's own cloud kernel from its release suite, and
/// trixie's, which is in both its release and security suites; then the
/// kernels built from bookworm's 6.1 source (same version as debian-6.1)
/// with blk-iolatency and blk-ioprio, at HZ=1000 and HZ=250.
pub const KERNELS: &[KernelPin] = &[
    KernelPin {
        name: "debian-6.1",
        package: "linux-image-6.1.0-50-cloud-amd64",
        version: "6.1.176-1",
        deb_sha256: "efe19f605b6f54a8352e68d85a629abb2d30b72a085faef603a9152590baa791",
        suite: "bookworm",
        release: "6.1.0-50-cloud-amd64",
        build: None,
    },
    KernelPin {
        name: "debian-6.12",
        package: "linux-image-6.12.117+deb13-cloud-amd64",
        version: "6.12.117-1",
        deb_sha256: "e9893e5295d0549b8852611f12a4b8b5f6cc4b8128dcc2086b9847793b904ab7",
        suite: "trixie",
        release: "6.12.117+deb13-cloud-amd64",
        build: None,
    },
    KernelPin {
        name: "built-6.1-hz1000",
        release: "6.1.176-blklab-hz1000",
        build: Some(BuildSpec { hz: 1000 }),
        ..SOURCE_6_1
    },
    KernelPin {
        name: "built-6.1-hz250",
        release: "6.1.176-blklab-hz250",
        build: Some(BuildSpec { hz: 250 }),
        ..SOURCE_6_1
    },
];

/// The configuration symbols reported for each kernel (what the cgroup I/O
/// controllers and the test devices depend on).
pub const REPORTED_FLAGS: &[&str] = &[
    "CONFIG_BLK_CGROUP_IOCOST",
    "CONFIG_BLK_DEV_THROTTLING",
    "CONFIG_BLK_CGROUP_IOLATENCY",
    "CONFIG_BLK_CGROUP_IOPRIO",
    "CONFIG_BLK_WBT",
    "CONFIG_IOSCHED_BFQ",
    "CONFIG_BFQ_GROUP_IOSCHED",
    "CONFIG_BLK_DEV_LOOP",
    "CONFIG_MQ_IOSCHED_DEADLINE",
];

pub(crate) const MANIFEST: &str = "manifest";
const MANIFEST_HEADER: &str = "blklab-vm kernel cache v1";
const DEB: &str = "package.deb";

/// The pin called `name`.
pub fn pin(name: &str) -> Result<&'static KernelPin> {
    KERNELS
        .iter()
        .find(|k| k.name == name)
        .ok_or_else(|| VmError::UnknownKernel {
            name: name.to_string(),
            known: KERNELS.iter().map(|k| k.name).collect(),
        })
}

/// The kernel cache: `$BLKLAB_CACHE` if set (used as is), else
/// `$XDG_CACHE_HOME/blklab/kernels`, else `$HOME/.cache/blklab/kernels`.
pub fn default_cache_dir() -> Result<PathBuf> {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = var("BLKLAB_CACHE") {
        return Ok(PathBuf::from(d));
    }
    if let Some(d) = var("XDG_CACHE_HOME") {
        return Ok(PathBuf::from(d).join("blklab/kernels"));
    }
    if let Some(h) = var("HOME") {
        return Ok(PathBuf::from(h).join(".cache/blklab/kernels"));
    }
    Err(VmError::io(
        "choosing the kernel cache",
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "none of BLKLAB_CACHE, XDG_CACHE_HOME, HOME is set",
        ),
    ))
}

/// A registry entry and whether the cache holds it.
#[derive(Debug, Clone)]
pub struct Listing {
    pub pin: KernelPin,
    /// A complete entry exists (its hashes are checked by `ensure`, not here).
    pub cached: bool,
    pub dir: PathBuf,
}

/// Every registry entry with its cache state.
pub fn list(cache_dir: &Path) -> Vec<Listing> {
    KERNELS
        .iter()
        .map(|p| {
            let dir = cache_dir.join(p.name);
            Listing {
                pin: *p,
                cached: dir.join(MANIFEST).is_file(),
                dir,
            }
        })
        .collect()
}

/// A verified cache entry, ready to boot.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub pin: KernelPin,
    pub dir: PathBuf,
    pub vmlinuz: PathBuf,
    /// The kernel's .config, parsed.
    pub config: BTreeMap<String, String>,
    /// Module files in load order (dependencies first).
    pub modules: Vec<PathBuf>,
}

impl Kernel {
    pub fn flag(&self, sym: &str) -> Tristate {
        kmod::tristate(&self.config, sym)
    }

    /// Whether the booted guest has `sym`: built in, or a module the guest
    /// loads (one of `kmod::WANTED` whose file this kernel carries; a
    /// `local:` kernel carries none).
    pub fn offers(&self, sym: &str) -> bool {
        match self.flag(sym) {
            Tristate::Yes => true,
            Tristate::No => false,
            Tristate::Module => kmod::WANTED
                .iter()
                .filter(|(s, _)| *s == sym)
                .any(|(_, m)| {
                    self.modules
                        .iter()
                        .any(|p| p.file_stem().is_some_and(|f| f == *m))
                }),
        }
    }

    /// `REPORTED_FLAGS` with their values.
    pub fn flags(&self) -> Vec<(&'static str, Tristate)> {
        REPORTED_FLAGS.iter().map(|s| (*s, self.flag(s))).collect()
    }

    /// CONFIG_HZ.
    pub fn hz(&self) -> Option<u32> {
        config_hz(&self.config)
    }
}

/// Write `dir/manifest` for the files already in `dir` (written last: its
/// presence marks a complete entry): `fields` as `key value` lines, the
/// sha256 of `files` and of every module, and the module load order.
pub(crate) fn write_manifest(
    dir: &Path,
    pin: &KernelPin,
    fields: &[(&str, String)],
    files: &[&str],
    modules: &[String],
) -> Result<()> {
    let mut m = format!(
        "{MANIFEST_HEADER}\nname {}\npackage {}\nversion {}\n",
        pin.name, pin.package, pin.version
    );
    for (k, v) in fields {
        m.push_str(&format!("{k} {v}\n"));
    }
    let mut files: Vec<String> = files.iter().map(|f| f.to_string()).collect();
    files.extend(modules.iter().map(|n| format!("modules/{n}.ko")));
    for f in &files {
        m.push_str(&format!("file {} {f}\n", sha256_file(&dir.join(f))?));
    }
    for n in modules {
        m.push_str(&format!("module {n}\n"));
    }
    let p = dir.join(MANIFEST);
    std::fs::write(&p, m).map_err(|e| VmError::io(format!("writing {}", p.display()), e))
}

/// Read a cache entry, checking that it is for `pin` and that every file
/// still has its recorded sha256 (the .deb's must also be the pinned one).
pub fn load_verified(pin: &KernelPin, dir: &Path) -> Result<Kernel> {
    let invalid = |reason: String| VmError::CacheInvalid {
        dir: dir.to_path_buf(),
        reason,
    };
    let mpath = dir.join(MANIFEST);
    let text = std::fs::read_to_string(&mpath)
        .map_err(|e| invalid(format!("cannot read {}: {e}", mpath.display())))?;
    let mut lines = text.lines();
    if lines.next() != Some(MANIFEST_HEADER) {
        return Err(invalid("manifest has an unknown format".into()));
    }
    let mut fields = BTreeMap::new();
    let mut files = Vec::new();
    let mut modules = Vec::new();
    for l in lines {
        match l.split_once(' ') {
            Some(("file", rest)) => {
                let (sha, rel) = rest
                    .split_once(' ')
                    .ok_or_else(|| invalid(format!("bad manifest line '{l}'")))?;
                if rel.contains("..") || rel.starts_with('/') {
                    return Err(invalid(format!("bad path in manifest: '{rel}'")));
                }
                files.push((sha.to_string(), rel.to_string()));
            }
            Some(("module", n)) => modules.push(n.to_string()),
            Some((k, v)) => {
                fields.insert(k.to_string(), v.to_string());
            }
            None => return Err(invalid(format!("bad manifest line '{l}'"))),
        }
    }
    for (k, want) in [
        ("name", pin.name),
        ("package", pin.package),
        ("version", pin.version),
    ] {
        if fields.get(k).map(String::as_str) != Some(want) {
            return Err(invalid(format!(
                "manifest {k} is {:?}, the pin says '{want}'",
                fields.get(k)
            )));
        }
    }
    let mut seen_deb = false;
    for (expected, rel) in &files {
        let expected = if rel == DEB && pin.build.is_none() {
            seen_deb = true;
            // The pin, not the manifest, is the authority for the package.
            pin.deb_sha256
        } else {
            expected.as_str()
        };
        let path = dir.join(rel);
        let actual = sha256_file(&path).map_err(|e| invalid(e.to_string()))?;
        if actual != expected {
            return Err(VmError::CacheTampered {
                dir: dir.to_path_buf(),
                path,
                expected: expected.to_string(),
                actual,
            });
        }
    }
    let listed = |r: &str| files.iter().any(|(_, f)| f == r);
    // A built kernel keeps no package: its manifest names the source's sha256.
    let needs_deb = pin.build.is_none();
    if (needs_deb && !seen_deb) || !listed("vmlinuz") || !listed("config") {
        return Err(invalid(
            "manifest lacks package.deb, vmlinuz or config".into(),
        ));
    }
    let module_paths: Vec<PathBuf> = modules
        .iter()
        .map(|n| format!("modules/{n}.ko"))
        .map(|r| {
            if listed(&r) {
                Ok(dir.join(r))
            } else {
                Err(invalid(format!("module {r} has no hash in the manifest")))
            }
        })
        .collect::<Result<_>>()?;
    let cpath = dir.join("config");
    let config = std::fs::read_to_string(&cpath)
        .map_err(|e| VmError::io(format!("reading {}", cpath.display()), e))?;
    if let Some(spec) = &pin.build {
        let source = Source {
            package: pin.package,
            version: pin.version,
            sha256: pin.deb_sha256,
        };
        kconfig::verify_entry(spec, &fields, &source, &config).map_err(invalid)?;
    }
    Ok(Kernel {
        pin: *pin,
        dir: dir.to_path_buf(),
        vmlinuz: dir.join("vmlinuz"),
        config: kmod::parse_config(&config),
        modules: module_paths,
    })
}

fn unavailable(pin: &KernelPin, reason: String, fetch_command: String) -> VmError {
    VmError::KernelUnavailable {
        name: pin.name.into(),
        package: pin.package.into(),
        version: pin.version.into(),
        reason,
        fetch_command,
    }
}

/// What a failed command said (its command line is in the fetch command).
fn command_detail(e: VmError) -> String {
    match e {
        VmError::Command { detail, .. } => detail,
        other => other.to_string(),
    }
}

/// A temporary directory in `dir` named `prefix…` (removed when dropped).
pub(crate) fn tempdir_in(dir: &Path, prefix: &str) -> Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(dir)
        .map_err(|e| {
            VmError::io(
                format!("creating a temporary directory in {}", dir.display()),
                e,
            )
        })
}

/// Download the pinned package `pin` with the private apt configuration
/// into the directory `into` and check its sha256; its path.
pub(crate) fn download_pinned(pin: &KernelPin, cache_dir: &Path, into: &Path) -> Result<PathBuf> {
    let apt_get = tools::require(tools::APT_GET)?;
    let as_root = tools::is_root();
    let plain_cmd = format!(
        "apt-get download {}={} (from a Debian mirror carrying {})",
        pin.package, pin.version, pin.suite
    );
    let sources = apt::read_host_sources(Path::new("/etc/apt"));
    let codename = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| apt::host_codename(&t));
    let mirrors = apt::mirrors(&sources, codename.as_deref()).ok_or_else(|| {
        unavailable(
            pin,
            "no Debian mirror can be derived from the host's apt sources (/etc/apt/sources.list, /etc/apt/sources.list.d/*.sources): none serves a release suite".into(),
            plain_cmd.clone(),
        )
    })?;
    let apt = PrivateApt::create(
        &cache_dir.join("apt").join(pin.suite),
        &apt::private_sources(&mirrors, pin.suite),
    )?;
    let opts = apt.options(as_root);
    let fetch_cmd = apt.fetch_command_text(as_root, pin.package, pin.version);
    let spec = format!("{}={}", pin.package, pin.version);
    let update = || {
        tools::run(
            Command::new(&apt_get)
                .args(&opts)
                .args(["-q", "update", "--error-on=any"]),
        )
    };
    let download = || {
        tools::run(
            Command::new(&apt_get)
                .args(&opts)
                .args(["-q", "download", &spec])
                .current_dir(into),
        )
    };
    // Lists from an earlier fetch may already know the pin; refresh them
    // only when the download fails.
    let lists_known =
        tools::run(Command::new("apt-cache").args(&opts).args(["show", &spec])).is_ok();
    if !(lists_known && download().is_ok()) {
        update().map_err(|e| {
            unavailable(
                pin,
                format!("apt-get update failed: {}", command_detail(e)),
                fetch_cmd.clone(),
            )
        })?;
        download().map_err(|e| {
            unavailable(
                pin,
                format!("apt-get download failed: {}", command_detail(e)),
                fetch_cmd.clone(),
            )
        })?;
    }

    let deb = std::fs::read_dir(into)
        .map_err(|e| VmError::io(format!("listing {}", into.display()), e))?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .ok_or_else(|| {
            unavailable(
                pin,
                "apt-get download left no .deb".into(),
                fetch_cmd.clone(),
            )
        })?;
    let actual = sha256_file(&deb)?;
    if actual != pin.deb_sha256 {
        return Err(VmError::DownloadMismatch {
            path: deb,
            expected: pin.deb_sha256.into(),
            actual,
        });
    }
    Ok(deb)
}

/// Download, check, unpack and install one stock cache entry.
pub(crate) fn fetch(pin: &KernelPin, cache_dir: &Path, dir: &Path) -> Result<()> {
    let dpkg_deb = tools::require(tools::DPKG_DEB)?;
    let tmp = tempdir_in(cache_dir, &format!(".fetch-{}-", pin.name))?;
    let deb = download_pinned(pin, cache_dir, tmp.path())?;
    let stage = tmp.path().join("entry");
    let unpacked = tmp.path().join("unpacked");
    let mk = |p: &Path| {
        std::fs::create_dir_all(p).map_err(|e| VmError::io(format!("creating {}", p.display()), e))
    };
    mk(&stage.join("modules"))?;
    mk(&unpacked)?;
    let staged_deb = stage.join(DEB);
    std::fs::rename(&deb, &staged_deb)
        .map_err(|e| VmError::io(format!("moving {}", deb.display()), e))?;
    tools::run(
        Command::new(&dpkg_deb)
            .arg("-x")
            .arg(&staged_deb)
            .arg(&unpacked),
    )?;
    install_from_unpacked(pin, &unpacked, &stage)?;
    std::fs::rename(&stage, dir).map_err(|e| {
        VmError::io(
            format!("renaming {} to {}", stage.display(), dir.display()),
            e,
        )
    })?;
    Ok(())
}

/// Copy vmlinuz, config and the needed modules out of an unpacked package
/// into `stage` (which already holds package.deb), then write the manifest.
fn install_from_unpacked(pin: &KernelPin, unpacked: &Path, stage: &Path) -> Result<()> {
    let bad = |reason: String| VmError::BadPackage {
        package: pin.package.into(),
        reason,
    };
    let copy = |from: PathBuf, to: &str| -> Result<()> {
        if !from.is_file() {
            return Err(bad(format!("{} is missing", from.display())));
        }
        std::fs::copy(&from, stage.join(to))
            .map(|_| ())
            .map_err(|e| VmError::io(format!("copying {}", from.display()), e))
    };
    copy(
        unpacked.join(format!("boot/vmlinuz-{}", pin.release)),
        "vmlinuz",
    )?;
    copy(
        unpacked.join(format!("boot/config-{}", pin.release)),
        "config",
    )?;
    let config_text = std::fs::read_to_string(stage.join("config"))
        .map_err(|e| VmError::io("reading the kernel config", e))?;
    let config = kmod::parse_config(&config_text);
    // bookworm keeps modules in /lib/modules, trixie in /usr/lib/modules.
    let mdir = ["lib/modules", "usr/lib/modules"]
        .iter()
        .map(|d| unpacked.join(d).join(pin.release))
        .find(|d| d.is_dir())
        .ok_or_else(|| bad(format!("no modules directory for {}", pin.release)))?;
    let modules = kmod::resolve(&config, &mdir, pin.package)?;
    let mut names = Vec::new();
    for m in &modules {
        let p = stage.join(format!("modules/{}.ko", m.name));
        std::fs::write(&p, &m.image)
            .map_err(|e| VmError::io(format!("writing {}", p.display()), e))?;
        names.push(m.name.clone());
    }
    write_manifest(stage, pin, &[], &[DEB, "vmlinuz", "config"], &names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_pin(deb: &[u8]) -> KernelPin {
        let sha = sha256_bytes(deb);
        KernelPin {
            name: "fake-1.0",
            package: "linux-image-fake",
            version: "1.0-1",
            deb_sha256: Box::leak(sha.into_boxed_str()),
            suite: "nowhere",
            release: "1.0-fake",
            build: None,
        }
    }

    /// A cache entry built the way `fetch` builds one, from a fake unpacked package.
    fn fake_entry(root: &Path, pin: &KernelPin, deb: &[u8]) -> PathBuf {
        let unpacked = root.join("unpacked");
        let mods = unpacked.join(format!(
            "usr/lib/modules/{}/kernel/drivers/block",
            pin.release
        ));
        std::fs::create_dir_all(&mods).unwrap();
        std::fs::create_dir_all(unpacked.join("boot")).unwrap();
        std::fs::write(
            unpacked.join(format!("boot/vmlinuz-{}", pin.release)),
            b"kernel image",
        )
        .unwrap();
        std::fs::write(
            unpacked.join(format!("boot/config-{}", pin.release)),
            "CONFIG_HZ=250\nCONFIG_BLK_DEV_LOOP=m\nCONFIG_BLK_CGROUP_IOCOST=y\n",
        )
        .unwrap();
        std::fs::write(mods.join("loop.ko"), b"\x7fELF\0depends=\0").unwrap();
        let stage = root.join(pin.name);
        std::fs::create_dir_all(stage.join("modules")).unwrap();
        std::fs::write(stage.join(DEB), deb).unwrap();
        install_from_unpacked(pin, &unpacked, &stage).unwrap();
        stage
    }

    #[test]
    fn registry_names_and_pins() {
        assert_eq!(pin("debian-6.12").unwrap().suite, "trixie");
        assert_eq!(pin("debian-6.1").unwrap().suite, "bookworm");
        for k in KERNELS {
            assert_eq!(k.deb_sha256.len(), 64);
            match &k.build {
                None => assert!(k.package.contains(k.release), "{k:?}"),
                Some(b) => {
                    assert!(k.package.starts_with("linux-source-"), "{k:?}");
                    assert!(k.name.ends_with(&format!("-hz{}", b.hz)), "{k:?}");
                    assert!(k.release.ends_with(&format!("-blklab-hz{}", b.hz)), "{k:?}");
                }
            }
        }
        assert_eq!(pin("debian-6.12").unwrap().series(), "6.12");
        assert_eq!(pin("debian-6.1").unwrap().series(), "6.1");
        let b = pin("built-6.1-hz1000").unwrap();
        assert_eq!(
            (b.series().as_str(), b.build),
            ("6.1", Some(BuildSpec { hz: 1000 }))
        );
        assert_eq!(
            pin("built-6.1-hz250").unwrap().build,
            Some(BuildSpec { hz: 250 })
        );
        let e = pin("debian-9").unwrap_err();
        assert!(e.to_string().contains("debian-6.1, debian-6.12"), "{e}");
    }

    #[test]
    fn list_reports_cache_state() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("debian-6.1")).unwrap();
        std::fs::write(d.path().join("debian-6.1").join(MANIFEST), "x").unwrap();
        let l = list(d.path());
        assert_eq!(l.len(), KERNELS.len());
        assert!(
            l.iter()
                .find(|x| x.pin.name == "debian-6.1")
                .unwrap()
                .cached
        );
        assert!(
            !l.iter()
                .find(|x| x.pin.name == "debian-6.12")
                .unwrap()
                .cached
        );
    }

    #[test]
    fn verified_entry_loads_with_modules_and_config() {
        let d = tempfile::tempdir().unwrap();
        let pin = fake_pin(b"a fake .deb");
        let dir = fake_entry(d.path(), &pin, b"a fake .deb");
        let k = load_verified(&pin, &dir).unwrap();
        assert_eq!(k.hz(), Some(250));
        assert_eq!(k.flag("CONFIG_BLK_DEV_LOOP"), Tristate::Module);
        assert_eq!(k.modules, [dir.join("modules/loop.ko")]);
        assert_eq!(k.flags().len(), REPORTED_FLAGS.len());
    }

    #[test]
    fn tampered_files_are_detected() {
        for victim in [DEB, "vmlinuz", "config", "modules/loop.ko"] {
            let d = tempfile::tempdir().unwrap();
            let pin = fake_pin(b"a fake .deb");
            let dir = fake_entry(d.path(), &pin, b"a fake .deb");
            let mut bytes = std::fs::read(dir.join(victim)).unwrap();
            bytes[0] ^= 1;
            std::fs::write(dir.join(victim), bytes).unwrap();
            match load_verified(&pin, &dir) {
                Err(VmError::CacheTampered { path, .. }) => assert_eq!(path, dir.join(victim)),
                other => panic!("{victim}: {other:?}"),
            }
        }
    }

    /// Re-hashing the manifest does not help: the .deb is checked against the pin.
    #[test]
    fn a_deb_other_than_the_pinned_one_is_rejected_even_with_a_fresh_manifest() {
        let d = tempfile::tempdir().unwrap();
        let pin = fake_pin(b"the pinned .deb");
        let dir = fake_entry(d.path(), &pin, b"another .deb");
        assert!(matches!(
            load_verified(&pin, &dir),
            Err(VmError::CacheTampered { .. })
        ));
    }

    #[test]
    fn a_manifest_for_another_pin_or_a_missing_file_is_invalid() {
        let d = tempfile::tempdir().unwrap();
        let pin = fake_pin(b"deb");
        let dir = fake_entry(d.path(), &pin, b"deb");
        let other = KernelPin {
            version: "2.0-1",
            ..pin
        };
        assert!(matches!(
            load_verified(&other, &dir),
            Err(VmError::CacheInvalid { .. })
        ));
        std::fs::remove_file(dir.join("vmlinuz")).unwrap();
        assert!(matches!(
            load_verified(&pin, &dir),
            Err(VmError::CacheInvalid { .. })
        ));
    }
}

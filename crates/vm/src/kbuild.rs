//! Guest kernels built here from Debian's own kernel source package
//! (`linux-source-<series>`), for what the stock cloud kernels lack: they are
//! built with CONFIG_HZ=250 and without blk-iolatency and blk-ioprio.
//!
//! A built kernel is pinned like a stock one (the source package's exact
//! version and sha256) and configured with `make allnoconfig` plus blklab's
//! fragment (`kbuild/blklab.config`, with CONFIG_HZ chosen per kernel):
//! everything is built in, so no module is loaded in the guest. Every
//! symbol of the fragment is checked in the resulting .config before the
//! build, and again each time the cache entry is used.
//!
//! Cache entry (`<cache>/<name>/`): `vmlinuz` (arch/x86/boot/bzImage),
//! `config` (the .config), `blklab.config` (the fragment applied), and the
//! `manifest` with every file's sha256 and the sha256 of the source package
//! and of the fragment. The source package is kept once in
//! `<cache>/sources/` for every kernel built from it. The build happens in a
//! temporary directory inside the cache (about 2 GB while it runs) that is
//! renamed into place when complete and removed otherwise.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::digest;
use crate::error::{Result, VmError};
use crate::kconfig::{self, BuildSpec, FRAGMENT_FILE};
use crate::kernels::{self, KernelPin};
use crate::tools::{self, Tool};

/// Host programs the build runs, with the Debian packages providing them.
pub const BUILD_TOOLS: &[Tool] = &[
    Tool {
        name: "make",
        package: "make",
    },
    Tool {
        name: "gcc",
        package: "gcc",
    },
    Tool {
        name: "flex",
        package: "flex",
    },
    Tool {
        name: "bison",
        package: "bison",
    },
    Tool {
        name: "bc",
        package: "bc",
    },
    Tool {
        name: "perl",
        package: "perl",
    },
    Tool {
        name: "tar",
        package: "tar",
    },
    Tool {
        name: "xz",
        package: "xz-utils",
    },
    Tool {
        name: "nice",
        package: "coreutils",
    },
];

/// objtool (which x86-64's ORC unwinder needs) is built against libelf.
const LIBELF_HEADER: &str = "/usr/include/gelf.h";

/// The Debian packages a build needs (for `.ci/run` and error messages).
pub const BUILD_PACKAGES: &str = "make gcc flex bison bc perl xz-utils libelf-dev";

/// The build tools that are missing, each as an exit-4 class error.
pub fn missing_build_tools() -> Vec<VmError> {
    let mut out: Vec<VmError> = BUILD_TOOLS
        .iter()
        .filter_map(|t| tools::require(*t).err())
        .collect();
    if !Path::new(LIBELF_HEADER).is_file() {
        out.push(VmError::ToolMissing {
            tool: LIBELF_HEADER.into(),
            package: "libelf-dev".into(),
            detail: "objtool, which the x86-64 build runs, includes it".into(),
        });
    }
    out
}

/// Set to `1`, tests that need a built kernel skip when it is not cached
/// instead of building it.
pub const SKIP_BUILD_ENV: &str = "BLKLAB_SKIP_KERNEL_BUILD";

/// Why the built kernel `name` can be neither taken from `cache_dir` nor
/// built here (for tests: a missing build tool, or `SKIP_BUILD_ENV`); None
/// when it is cached or can be built.
pub fn unavailable(name: &str, cache_dir: &Path) -> Option<String> {
    if cache_dir.join(name).join("manifest").is_file() {
        return None;
    }
    if std::env::var(SKIP_BUILD_ENV).as_deref() == Ok("1") {
        return Some(format!(
            "{name} is not in {} and {SKIP_BUILD_ENV}=1; build it with `blklab conformance --kernel {name} --quick ioprio-class-rt-be-mq-deadline`",
            cache_dir.display()
        ));
    }
    missing_build_tools().first().map(|e| e.to_string())
}

/// The source package, downloaded once into `<cache>/sources/` and checked
/// against the pin each time.
fn source_deb(pin: &KernelPin, cache_dir: &Path) -> Result<PathBuf> {
    let dir = cache_dir.join("sources");
    let path = dir.join(format!("{}_{}_all.deb", pin.package, pin.version));
    if path.is_file() && digest::sha256_file(&path)? == pin.deb_sha256 {
        return Ok(path);
    }
    std::fs::create_dir_all(&dir)
        .map_err(|e| VmError::io(format!("creating {}", dir.display()), e))?;
    let tmp = kernels::tempdir_in(&dir, ".download-")?;
    let deb = kernels::download_pinned(pin, cache_dir, tmp.path())?;
    std::fs::rename(&deb, &path)
        .map_err(|e| VmError::io(format!("moving {} to {}", deb.display(), path.display()), e))?;
    Ok(path)
}

/// Run `cmd`, its output going to `log`; on failure, the log's last lines.
fn run_logged(cmd: &mut Command, log: &Path, what: &str) -> Result<()> {
    let out = std::fs::File::create(log)
        .map_err(|e| VmError::io(format!("creating {}", log.display()), e))?;
    let err = out
        .try_clone()
        .map_err(|e| VmError::io(format!("opening {}", log.display()), e))?;
    let status = cmd
        .stdout(out)
        .stderr(err)
        .status()
        .map_err(|e| VmError::io(format!("running {what}"), e))?;
    if status.success() {
        return Ok(());
    }
    Err(VmError::Command {
        command: what.to_string(),
        detail: format!(
            "{status}; last lines of {}:\n{}",
            log.display(),
            crate::qemu::tail_lines(log, 25)
        ),
    })
}

/// `make` in `src` for x86-64 at nice 10 (the build shares the machine).
fn make(src: &Path) -> Command {
    let mut c = Command::new("nice");
    c.args(["-n", "10", "make", "-C"])
        .arg(src)
        .arg("ARCH=x86_64");
    c
}

/// Build kernel `pin` (with `spec`) into the cache entry `dir`.
pub fn build(pin: &KernelPin, spec: &BuildSpec, cache_dir: &Path, dir: &Path) -> Result<()> {
    if let Some(e) = missing_build_tools().into_iter().next() {
        return Err(e);
    }
    let fragment = kconfig::render_fragment(spec)?;
    sweep_stale_trees(cache_dir);
    let deb = source_deb(pin, cache_dir)?;
    let tmp = kernels::tempdir_in(cache_dir, &format!(".build-{}-", pin.name))?;
    let t0 = Instant::now();
    let unpacked = tmp.path().join("unpacked");
    tools::run(
        Command::new(tools::require(tools::DPKG_DEB)?)
            .arg("-x")
            .arg(&deb)
            .arg(&unpacked),
    )?;
    let tarball = unpacked
        .join("usr/src")
        .join(format!("{}.tar.xz", pin.package));
    if !tarball.is_file() {
        return Err(VmError::BadPackage {
            package: pin.package.into(),
            reason: format!("{} is missing", tarball.display()),
        });
    }
    tools::run(
        Command::new("tar")
            .arg("-xJf")
            .arg(&tarball)
            .arg("-C")
            .arg(tmp.path()),
    )?;
    std::fs::remove_dir_all(&unpacked)
        .map_err(|e| VmError::io(format!("removing {}", unpacked.display()), e))?;
    let src = tmp.path().join(pin.package);
    let frag_path = tmp.path().join(FRAGMENT_FILE);
    std::fs::write(&frag_path, &fragment)
        .map_err(|e| VmError::io(format!("writing {}", frag_path.display()), e))?;

    // allnoconfig with KCONFIG_ALLCONFIG: the fragment's values are forced,
    // everything else gets its "no" answer or its default without a prompt.
    let mut cfg = make(&src);
    cfg.arg(format!("KCONFIG_ALLCONFIG={}", frag_path.display()))
        .arg("allnoconfig");
    run_logged(&mut cfg, &tmp.path().join("config.log"), "make allnoconfig")?;
    let config_path = src.join(".config");
    let config = std::fs::read_to_string(&config_path)
        .map_err(|e| VmError::io(format!("reading {}", config_path.display()), e))?;
    let bad = kconfig::mismatches(&fragment, &config);
    if !bad.is_empty() {
        return Err(VmError::BadBuild(format!(
            "{} {}: the configuration did not keep {} (a dependency the fragment lacks?)",
            pin.package,
            pin.version,
            kconfig::describe_mismatches(&bad)
        )));
    }
    let jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut bz = make(&src);
    bz.arg(format!("-j{jobs}")).arg("bzImage");
    run_logged(&mut bz, &tmp.path().join("build.log"), "make bzImage")?;
    let build_secs = t0.elapsed().as_secs_f64();

    let stage = tmp.path().join("entry");
    std::fs::create_dir_all(&stage)
        .map_err(|e| VmError::io(format!("creating {}", stage.display()), e))?;
    for (from, to) in [
        (src.join("arch/x86/boot/bzImage"), "vmlinuz"),
        (config_path, "config"),
        (frag_path, FRAGMENT_FILE),
    ] {
        std::fs::copy(&from, stage.join(to))
            .map_err(|e| VmError::io(format!("copying {}", from.display()), e))?;
    }
    kernels::write_manifest(
        &stage,
        pin,
        &[
            ("source-sha256", pin.deb_sha256.to_string()),
            ("fragment-sha256", digest::sha256_bytes(fragment.as_bytes())),
            // How long unpacking, configuring and building took here (wall).
            ("build-wall-secs", format!("{build_secs:.0}")),
        ],
        &["vmlinuz", "config", FRAGMENT_FILE],
        &[],
    )?;
    let renamed = std::fs::rename(&stage, dir).map_err(|e| {
        VmError::io(
            format!("renaming {} to {}", stage.display(), dir.display()),
            e,
        )
    });
    discard_in_background(tmp.keep());
    renamed
}

/// The build trees a killed build left in the cache (`.build-*`; the cache
/// lock is held, so none is in use), handed to [`discard_in_background`].
fn sweep_stale_trees(cache_dir: &Path) {
    let Ok(rd) = std::fs::read_dir(cache_dir) else {
        return;
    };
    for e in rd.flatten() {
        if e.file_name().to_string_lossy().starts_with(".build-") {
            discard_in_background(e.path());
        }
    }
}

/// Delete a build tree (about 2 GB) without waiting for it: on a disk that
/// discards freed blocks the deletion took 5 minutes here, which held up the
/// first boot. An `rm -rf` child is left to it (it outlives this process if
/// need be; a tree it leaves behind is swept by the next build); if it cannot
/// be started, the tree is deleted here.
fn discard_in_background(path: PathBuf) {
    let spawned = Command::new("rm")
        .arg("-rf")
        .arg(&path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if spawned.is_err() {
        let _ = std::fs::remove_dir_all(&path);
    }
}

#[cfg(test)]
mod cache_tests {
    use super::*;
    use crate::error::VmError;
    use crate::kconfig::render_fragment;
    use crate::kmod;

    fn pin() -> KernelPin {
        KernelPin {
            name: "built-fake-hz1000",
            package: "linux-source-fake",
            version: "1.0-1",
            deb_sha256: "ab",
            suite: "nowhere",
            release: "1.0-blklab-hz1000",
            build: Some(BuildSpec { hz: 1000 }),
        }
    }

    /// An entry as `build` leaves it, with `config` as the built .config.
    fn entry(root: &Path, pin: &KernelPin, fragment: &str, config: &str) -> PathBuf {
        let dir = root.join(pin.name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("vmlinuz"), b"bzImage").unwrap();
        std::fs::write(dir.join("config"), config).unwrap();
        std::fs::write(dir.join(FRAGMENT_FILE), fragment).unwrap();
        kernels::write_manifest(
            &dir,
            pin,
            &[
                ("source-sha256", pin.deb_sha256.to_string()),
                ("fragment-sha256", digest::sha256_bytes(fragment.as_bytes())),
            ],
            &["vmlinuz", "config", FRAGMENT_FILE],
            &[],
        )
        .unwrap();
        dir
    }

    fn config_of(fragment: &str) -> String {
        // what Kconfig writes: every symbol, "is not set" for the off ones
        kmod::parse_config(fragment)
            .iter()
            .map(|(k, v)| match v.as_str() {
                "n" => format!("# {k} is not set\n"),
                v => format!("{k}={v}\n"),
            })
            .collect()
    }

    #[test]
    fn a_built_entry_loads_without_modules_and_with_its_hz() {
        let d = tempfile::tempdir().unwrap();
        let p = pin();
        let f = render_fragment(&p.build.unwrap()).unwrap();
        let dir = entry(d.path(), &p, &f, &config_of(&f));
        let k = kernels::load_verified(&p, &dir).unwrap();
        assert_eq!(k.hz(), Some(1000));
        assert!(k.modules.is_empty());
        assert_eq!(k.flag("CONFIG_BLK_CGROUP_IOPRIO"), kmod::Tristate::Yes);
        assert_eq!(k.flag("CONFIG_BLK_CGROUP_IOLATENCY"), kmod::Tristate::Yes);
    }

    #[test]
    fn a_built_entry_with_another_fragment_source_or_config_is_invalid() {
        let p = pin();
        let f = render_fragment(&p.build.unwrap()).unwrap();
        let invalid = |dir: &Path, want: &str| match kernels::load_verified(&p, dir) {
            Err(VmError::CacheInvalid { reason, .. }) => {
                assert!(reason.contains(want), "{reason}")
            }
            other => panic!("{other:?}"),
        };
        // built at HZ=250 but registered as hz1000: the fragment differs
        let d = tempfile::tempdir().unwrap();
        let f250 = render_fragment(&BuildSpec { hz: 250 }).unwrap();
        invalid(
            &entry(d.path(), &p, &f250, &config_of(&f250)),
            "another configuration fragment",
        );
        // from another source package
        let d = tempfile::tempdir().unwrap();
        let other = KernelPin {
            deb_sha256: "cd",
            ..p
        };
        invalid(
            &entry(d.path(), &other, &f, &config_of(&f)),
            "pinned source",
        );
        // a config (re-hashed in its manifest) that lost a controller
        let d = tempfile::tempdir().unwrap();
        let cfg = config_of(&f).replace(
            "CONFIG_BLK_CGROUP_IOPRIO=y",
            "# CONFIG_BLK_CGROUP_IOPRIO is not set",
        );
        invalid(
            &entry(d.path(), &p, &f, &cfg),
            "CONFIG_BLK_CGROUP_IOPRIO=y (got n)",
        );
    }

    #[test]
    fn a_modified_built_kernel_image_is_detected() {
        let d = tempfile::tempdir().unwrap();
        let p = pin();
        let f = render_fragment(&p.build.unwrap()).unwrap();
        let dir = entry(d.path(), &p, &f, &config_of(&f));
        std::fs::write(dir.join("vmlinuz"), b"another image").unwrap();
        assert!(matches!(
            kernels::load_verified(&p, &dir),
            Err(VmError::CacheTampered { .. })
        ));
    }
}

//! The guest's initramfs: busybox, fio and util-linux's losetup with their
//! shared libraries (as ldd finds them on the host), the kernel's modules,
//! the generated `/init`, its runner and helpers, and the case scripts.
//!
//! Uncompressed by default: the guest kernel unpacks an uncompressed cpio
//! with plain copies, whereas inflating ~85 MB under TCG costs seconds.

use std::collections::BTreeSet;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cpio;
use crate::error::{Result, VmError};
use crate::init_script::{self, BARRIER_SH, INIT, LIB_SH, RUNNER};
use crate::kernels::{Kernel, REPORTED_FLAGS};
use crate::protocol::CaseSpec;
use crate::tools;

/// How the archive is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    #[default]
    None,
    Gzip,
}

/// The host programs copied into the guest.
#[derive(Debug, Clone)]
pub struct GuestTools {
    pub busybox: PathBuf,
    pub fio: PathBuf,
    pub losetup: PathBuf,
}

impl GuestTools {
    /// Find them; each absence is an exit-4 class error naming its package.
    pub fn find() -> Result<Self> {
        let busybox = tools::busybox()?;
        let fio = tools::require(tools::FIO)?;
        let losetup = tools::require(tools::LOSETUP)?;
        // busybox's applet is no substitute: it lacks --direct-io.
        let v = Command::new(&losetup).arg("--version").output();
        let is_util_linux = v
            .as_ref()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("util-linux"));
        if !is_util_linux {
            return Err(VmError::ToolMissing {
                tool: "losetup (util-linux)".into(),
                package: tools::LOSETUP.package.into(),
                detail: format!("{} is not util-linux's losetup", losetup.display()),
            });
        }
        Ok(GuestTools {
            busybox,
            fio,
            losetup,
        })
    }
}

/// What was built.
#[derive(Debug, Clone)]
pub struct Initramfs {
    pub path: PathBuf,
    pub size_bytes: u64,
}

/// Directories every guest has (mount points and the blklab tree).
const DIRS: &[&str] = &[
    "bin",
    "sbin",
    "usr/bin",
    "usr/sbin",
    "dev",
    "proc",
    "sys",
    "tmp",
    "run",
    "etc",
    "lib/modules/blklab",
    "blklab/cases",
];

/// Relevant configuration lines, for the guest_info probe.
pub fn kernel_config_text(kernel: &Kernel) -> String {
    let mut s = format!(
        "BLKLAB_KERNEL={}\nBLKLAB_PACKAGE={}={}\n",
        kernel.pin.name, kernel.pin.package, kernel.pin.version
    );
    for sym in std::iter::once("CONFIG_HZ").chain(REPORTED_FLAGS.iter().copied()) {
        let v = kernel.config.get(sym).map(String::as_str).unwrap_or("n");
        s.push_str(&format!("{sym}={v}\n"));
    }
    s
}

fn add_host_file<W: Write>(
    w: &mut cpio::Writer<W>,
    host: &Path,
    at: &str,
    perm: u32,
) -> Result<()> {
    let f = std::fs::File::open(host)
        .map_err(|e| VmError::io(format!("opening {}", host.display()), e))?;
    let size = f
        .metadata()
        .map_err(|e| VmError::io(format!("stat {}", host.display()), e))?
        .len();
    let mut r = std::io::BufReader::new(f);
    w.file_from(at, perm, size, &mut r)
        .map_err(|e| VmError::io(format!("adding {} to the initramfs", host.display()), e))
}

/// A program at `at` and every library it loads at the path ldd reports.
fn add_program<W: Write>(w: &mut cpio::Writer<W>, host: &Path, at: &str) -> Result<()> {
    add_host_file(w, host, at, 0o755)?;
    for lib in tools::libraries(host)? {
        let p = lib.display().to_string();
        if !w.contains(&p) {
            add_host_file(w, &lib, &p, 0o755)?;
        }
    }
    Ok(())
}

fn fill<W: Write>(
    w: &mut cpio::Writer<W>,
    kernel: &Kernel,
    tools: &GuestTools,
    cases: &[CaseSpec],
) -> Result<()> {
    let e = |what: &str| {
        let what = what.to_string();
        move |err: std::io::Error| VmError::io(format!("initramfs: {what}"), err)
    };
    for d in DIRS {
        w.dir_all(d).map_err(e(d))?;
    }
    w.char_dev("dev/console", 0o600, 5, 1)
        .map_err(e("dev/console"))?;
    w.file("init", 0o755, INIT.as_bytes()).map_err(e("init"))?;
    w.file("blklab/runner.sh", 0o644, RUNNER.as_bytes())
        .map_err(e("runner"))?;
    w.file("blklab/lib.sh", 0o644, LIB_SH.as_bytes())
        .map_err(e("lib.sh"))?;
    w.file("blklab/barrier.sh", 0o644, BARRIER_SH.as_bytes())
        .map_err(e("barrier"))?;
    w.file(
        "blklab/kernel-config",
        0o644,
        kernel_config_text(kernel).as_bytes(),
    )
    .map_err(e("kernel-config"))?;

    add_program(w, &tools.busybox, "bin/busybox")?;
    add_program(w, &tools.fio, "usr/bin/fio")?;
    add_program(w, &tools.losetup, "usr/sbin/losetup")?;
    let list = tools::run(Command::new(&tools.busybox).arg("--list"))?;
    let real: BTreeSet<&str> = ["busybox", "fio", "losetup"].into();
    for applet in list.split_whitespace() {
        let ok = applet
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.[".contains(&b));
        let at = format!("bin/{applet}");
        if ok && !real.contains(applet) && !w.contains(&at) {
            w.symlink(&at, "busybox").map_err(e(&at))?;
        }
    }
    if !w.contains("bin/sh") {
        w.symlink("bin/sh", "busybox").map_err(e("bin/sh"))?;
    }

    let mut order = String::new();
    for m in &kernel.modules {
        let name = m
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_default();
        add_host_file(w, m, &format!("lib/modules/blklab/{name}.ko"), 0o644)?;
        order.push_str(&name);
        order.push('\n');
    }
    w.file("blklab/modules.order", 0o644, order.as_bytes())
        .map_err(e("modules.order"))?;

    w.file(
        "blklab/cases.list",
        0o644,
        init_script::cases_list(cases)?.as_bytes(),
    )
    .map_err(e("cases.list"))?;
    for c in cases {
        let at = format!("blklab/cases/{}.sh", c.name);
        w.file(&at, 0o755, c.script.as_bytes()).map_err(e(&at))?;
    }
    Ok(())
}

/// Build the initramfs for `kernel` and `cases` at `out`. A failure removes
/// the partial file.
pub fn build(
    kernel: &Kernel,
    tools: &GuestTools,
    cases: &[CaseSpec],
    compression: Compression,
    out: &Path,
) -> Result<Initramfs> {
    init_script::validate(cases)?;
    let result = (|| -> Result<()> {
        let f = std::fs::File::create(out)
            .map_err(|e| VmError::io(format!("creating {}", out.display()), e))?;
        let buf = BufWriter::with_capacity(1 << 20, f);
        let io = |e| VmError::io(format!("writing {}", out.display()), e);
        match compression {
            Compression::None => {
                let mut w = cpio::Writer::new(buf);
                fill(&mut w, kernel, tools, cases)?;
                w.finish().map_err(io)?.flush().map_err(io)?;
            }
            Compression::Gzip => {
                let gz = flate2::write::GzEncoder::new(buf, flate2::Compression::fast());
                let mut w = cpio::Writer::new(gz);
                fill(&mut w, kernel, tools, cases)?;
                w.finish()
                    .map_err(io)?
                    .finish()
                    .map_err(io)?
                    .flush()
                    .map_err(io)?;
            }
        }
        Ok(())
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(out);
        return Err(e);
    }
    let size_bytes = std::fs::metadata(out)
        .map_err(|e| VmError::io(format!("stat {}", out.display()), e))?
        .len();
    Ok(Initramfs {
        path: out.to_path_buf(),
        size_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpio::{read_all, Kind};
    use crate::kernels::KernelPin;
    use std::collections::BTreeMap;

    fn fake_kernel(dir: &Path) -> Kernel {
        let m = dir.join("loop.ko");
        std::fs::write(&m, b"\x7fELF module").unwrap();
        let mut config = BTreeMap::new();
        config.insert("CONFIG_HZ".to_string(), "250".to_string());
        config.insert("CONFIG_BLK_CGROUP_IOCOST".to_string(), "y".to_string());
        Kernel {
            pin: KernelPin {
                name: "fake",
                package: "linux-image-fake",
                version: "1",
                deb_sha256: "",
                suite: "x",
                release: "1-fake",
                build: None,
            },
            dir: dir.to_path_buf(),
            vmlinuz: dir.join("vmlinuz"),
            config,
            modules: vec![m],
        }
    }

    /// Built from the host's real busybox, fio and losetup when present.
    #[test]
    fn archive_holds_tools_libraries_modules_and_cases() {
        let tools = match GuestTools::find() {
            Ok(t) => t,
            Err(e) => {
                eprintln!("SKIP: {e}");
                return;
            }
        };
        let d = tempfile::tempdir().unwrap();
        let k = fake_kernel(d.path());
        let cases = [CaseSpec {
            name: "c1".into(),
            script: "echo hi\n".into(),
            time_limit_secs: 5,
        }];
        for comp in [Compression::None, Compression::Gzip] {
            let out = d.path().join("initrd");
            let r = build(&k, &tools, &cases, comp, &out).unwrap();
            let mut bytes = std::fs::read(&out).unwrap();
            assert_eq!(bytes.len() as u64, r.size_bytes);
            if comp == Compression::Gzip {
                let mut plain = Vec::new();
                std::io::Read::read_to_end(
                    &mut flate2::read::GzDecoder::new(&bytes[..]),
                    &mut plain,
                )
                .unwrap();
                bytes = plain;
            }
            let entries = read_all(&bytes).unwrap();
            let get = |p: &str| entries.iter().find(|e| e.path == p).map(|e| &e.kind);
            assert_eq!(get("init"), Some(&Kind::File(INIT.as_bytes().to_vec())));
            assert_eq!(get("bin/sh"), Some(&Kind::Symlink("busybox".into())));
            assert_eq!(get("bin/mount"), Some(&Kind::Symlink("busybox".into())));
            assert!(
                get("bin/losetup").is_none(),
                "no busybox losetup next to util-linux's"
            );
            assert!(matches!(get("usr/bin/fio"), Some(Kind::File(_))));
            assert!(matches!(get("usr/sbin/losetup"), Some(Kind::File(_))));
            assert!(matches!(
                get("lib64/ld-linux-x86-64.so.2"),
                Some(Kind::File(_))
            ));
            assert_eq!(
                get("dev/console"),
                Some(&Kind::CharDev { major: 5, minor: 1 })
            );
            assert_eq!(
                get("lib/modules/blklab/loop.ko"),
                Some(&Kind::File(b"\x7fELF module".to_vec()))
            );
            assert_eq!(
                get("blklab/modules.order"),
                Some(&Kind::File(b"loop\n".to_vec()))
            );
            assert_eq!(
                get("blklab/cases.list"),
                Some(&Kind::File(b"0 c1 5\n".to_vec()))
            );
            assert_eq!(
                get("blklab/cases/c1.sh"),
                Some(&Kind::File(b"echo hi\n".to_vec()))
            );
            let Some(Kind::File(cfg)) = get("blklab/kernel-config") else {
                panic!()
            };
            let cfg = String::from_utf8_lossy(cfg);
            assert!(
                cfg.contains("CONFIG_HZ=250\n") && cfg.contains("CONFIG_BLK_CGROUP_IOLATENCY=n\n")
            );
        }
    }

    #[test]
    fn bad_cases_leave_no_file() {
        let d = tempfile::tempdir().unwrap();
        let k = fake_kernel(d.path());
        let tools = GuestTools {
            busybox: "/nonexistent".into(),
            fio: "/nonexistent".into(),
            losetup: "/nonexistent".into(),
        };
        let out = d.path().join("initrd");
        let bad = [CaseSpec {
            name: "a b".into(),
            script: String::new(),
            time_limit_secs: 1,
        }];
        assert!(matches!(
            build(&k, &tools, &bad, Compression::None, &out),
            Err(VmError::BadCase(_))
        ));
        let ok = [CaseSpec {
            name: "a".into(),
            script: String::new(),
            time_limit_secs: 1,
        }];
        assert!(build(&k, &tools, &ok, Compression::None, &out).is_err());
        assert!(!out.exists(), "a failed build removes its partial file");
    }
}

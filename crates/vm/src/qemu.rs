//! One boot of QEMU: a kernel, an initramfs, two serial ports (console and
//! results) into files, a wall-time limit, and caps on what the guest may
//! write.
//!
//! The machine: TCG with `-icount shift=0,sleep=off` (deterministic virtual
//! time, one instruction = 1 ns; idle time is skipped), one vCPU (icount with
//! -smp 2 hangs at bring-up), `-cpu max,-erms,-fsrm` (with ERMS/FSRM TCG
//! copies memory byte by byte), no default devices.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{Result, VmError};
use crate::protocol::{progress, Progress};
use crate::tools;

/// Default cap on each of the console and the results port, in bytes.
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 64 << 20;
/// How many console lines a failure report carries.
pub const CONSOLE_TAIL_LINES: usize = 30;
/// How often the files are polled.
const POLL: Duration = Duration::from_millis(100);

/// How to boot.
#[derive(Debug, Clone)]
pub struct BootOptions {
    pub memory_mib: u32,
    /// Wall time after which QEMU is killed and the boot reported as timed out.
    pub wall_limit: Duration,
    /// Appended to `console=ttyS0 panic=-1`.
    pub cmdline_extra: Vec<String>,
    /// QEMU binary; default `qemu-system-x86_64` from PATH.
    pub qemu: Option<PathBuf>,
    /// Cap on the console and on the results port, each.
    pub max_output_bytes: u64,
    /// Set to stop the guest early (e.g. from a SIGINT handler's flag).
    pub cancel: Option<Arc<AtomicBool>>,
    /// Keep the whole console log here.
    pub console_copy: Option<PathBuf>,
}

impl Default for BootOptions {
    fn default() -> Self {
        BootOptions {
            memory_mib: 3072,
            wall_limit: Duration::from_secs(600),
            cmdline_extra: Vec::new(),
            qemu: None,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
            cancel: None,
            console_copy: None,
        }
    }
}

impl BootOptions {
    /// A wall-time limit for cases whose time limits (guest seconds) sum to
    /// `case_secs`: 90 s for boot and start-up, then 4 wall seconds per guest
    /// second (a CPU-bound guest runs 1-3x slower than real time under TCG
    /// on a loaded 2-core host).
    pub fn suggested_wall_limit(case_secs: u64) -> Duration {
        Duration::from_secs(90 + 4 * case_secs)
    }
}

/// How the boot ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BootEnd {
    /// QEMU exited by itself: the guest powered off, or it panicked and
    /// "rebooted" (`-no-reboot` turns that into an exit as well).
    Exited { status: Option<i32> },
    /// The wall-time limit passed; QEMU was killed.
    TimedOut { limit_secs: u64 },
    /// The caller's cancel flag was set; QEMU was killed.
    Cancelled,
    /// The guest wrote more than the cap; QEMU was killed.
    TooLarge { what: String, limit_bytes: u64 },
}

/// What one boot produced.
#[derive(Debug, Clone)]
pub struct Boot {
    pub end: BootEnd,
    pub wall_secs: f64,
    /// Wall time until /init was ready to run the first case.
    pub ready_wall_secs: Option<f64>,
    /// (case index, wall seconds from its BEGIN to its END frame).
    pub case_wall_secs: Vec<(usize, f64)>,
    /// The results port, whole.
    pub results: Vec<u8>,
    /// The console's last lines.
    pub console_tail: String,
    /// QEMU's own stderr (last lines).
    pub qemu_stderr: String,
}

/// A QEMU option value with commas escaped (QEMU doubles them).
fn opt_path(p: &Path) -> String {
    p.display().to_string().replace(',', ",,")
}

/// The QEMU command line.
pub fn command(
    qemu: &Path,
    kernel: &Path,
    initrd: &Path,
    console: &Path,
    results: &Path,
    opts: &BootOptions,
) -> Command {
    let mut append = String::from("console=ttyS0 panic=-1");
    for x in &opts.cmdline_extra {
        append.push(' ');
        append.push_str(x);
    }
    let mut c = Command::new(qemu);
    c.args(["-accel", "tcg", "-icount", "shift=0,sleep=off"])
        .args(["-cpu", "max,-erms,-fsrm", "-smp", "1"])
        .args(["-m", &format!("{}M", opts.memory_mib)])
        .args(["-nographic", "-no-reboot", "-nodefaults", "-no-user-config"])
        .args([
            "-chardev",
            &format!("file,id=console,path={}", opt_path(console)),
        ])
        .args(["-serial", "chardev:console"])
        .args([
            "-chardev",
            &format!("file,id=results,path={}", opt_path(results)),
        ])
        .args(["-serial", "chardev:results"])
        .arg("-kernel")
        .arg(kernel)
        .arg("-initrd")
        .arg(initrd)
        .args(["-append", &append]);
    c
}

/// The last `n` lines of a file, reading at most its last 256 KiB; escape
/// sequences and other control characters are dropped.
pub fn tail_lines(path: &Path, n: usize) -> String {
    let Ok(mut f) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let from = len.saturating_sub(256 << 10);
    if f.seek(SeekFrom::Start(from)).is_err() {
        return String::new();
    }
    let mut buf = Vec::new();
    let _ = f.take(256 << 10).read_to_end(&mut buf);
    let text = strip_controls(&String::from_utf8_lossy(&buf));
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Drop ANSI escape sequences (SeaBIOS clears the screen) and control
/// characters other than newline and tab.
fn strip_controls(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for d in chars.by_ref() {
                    if d.is_ascii_alphabetic() {
                        break;
                    }
                }
            } else {
                chars.next();
            }
        } else if c == '\n' || c == '\t' || !c.is_control() {
            out.push(c);
        }
    }
    out
}

/// Reads what the guest appended to the results file since the last call,
/// noting the wall time at which progress lines arrive.
struct ResultsTail {
    path: PathBuf,
    file: Option<std::fs::File>,
    bytes: Vec<u8>,
    scanned: usize,
    events: Vec<(Progress, f64)>,
}

impl ResultsTail {
    /// Read new bytes; Err(()) when the cap would be exceeded.
    fn poll(&mut self, cap: u64, now_secs: f64) -> std::result::Result<(), ()> {
        if self.file.is_none() {
            self.file = std::fs::File::open(&self.path).ok();
        }
        let Some(f) = self.file.as_mut() else {
            return Ok(());
        };
        let room = cap.saturating_sub(self.bytes.len() as u64);
        let _ = f.take(room + 1).read_to_end(&mut self.bytes);
        if self.bytes.len() as u64 > cap {
            self.bytes.truncate(cap as usize);
            return Err(());
        }
        while let Some(nl) = self.bytes[self.scanned..].iter().position(|&b| b == b'\n') {
            let line = String::from_utf8_lossy(&self.bytes[self.scanned..self.scanned + nl]);
            if let Some(p) = progress(&line) {
                self.events.push((p, now_secs));
            }
            self.scanned += nl + 1;
        }
        Ok(())
    }
}

/// A QEMU that is killed (by its pid) if the boot is abandoned early, e.g.
/// by an error or a panic in the caller's thread; a no-op once reaped.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Boot `kernel` with `initrd`; console and results files go to `work_dir`.
/// Returns when QEMU has exited or been killed (only this QEMU process, by
/// its pid).
pub fn boot(kernel: &Path, initrd: &Path, work_dir: &Path, opts: &BootOptions) -> Result<Boot> {
    let qemu = match &opts.qemu {
        Some(q) => q.clone(),
        None => tools::require(tools::QEMU)?,
    };
    let console = work_dir.join("console.log");
    let results = work_dir.join("results.bin");
    let qemu_err = work_dir.join("qemu.stderr");
    let mk = |p: &Path| {
        std::fs::File::create(p).map_err(|e| VmError::io(format!("creating {}", p.display()), e))
    };
    let (out_f, err_f) = (mk(&work_dir.join("qemu.stdout"))?, mk(&qemu_err)?);
    let spawned = command(&qemu, kernel, initrd, &console, &results, opts)
        .stdin(Stdio::null())
        .stdout(out_f)
        .stderr(err_f)
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => VmError::ToolMissing {
                tool: qemu.display().to_string(),
                package: tools::QEMU.package.into(),
                detail: "cannot be started".into(),
            },
            _ => VmError::io(format!("starting {}", qemu.display()), e),
        })?;
    let mut child = KillOnDrop(spawned);
    let child = &mut child.0;
    let start = Instant::now();
    let mut tail = ResultsTail {
        path: results.clone(),
        file: None,
        bytes: Vec::new(),
        scanned: 0,
        events: Vec::new(),
    };
    let cap = opts.max_output_bytes;
    let end = loop {
        let now = start.elapsed();
        if let Some(status) = child
            .try_wait()
            .map_err(|e| VmError::io("waiting for qemu", e))?
        {
            if tail.poll(cap, now.as_secs_f64()).is_err() {
                break BootEnd::TooLarge {
                    what: "the results port".into(),
                    limit_bytes: cap,
                };
            }
            break BootEnd::Exited {
                status: status.code(),
            };
        }
        let stop = if now > opts.wall_limit {
            Some(BootEnd::TimedOut {
                limit_secs: opts.wall_limit.as_secs(),
            })
        } else if opts
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::SeqCst))
        {
            Some(BootEnd::Cancelled)
        } else if tail.poll(cap, now.as_secs_f64()).is_err() {
            Some(BootEnd::TooLarge {
                what: "the results port".into(),
                limit_bytes: cap,
            })
        } else if std::fs::metadata(&console).map(|m| m.len()).unwrap_or(0) > cap {
            Some(BootEnd::TooLarge {
                what: "the console".into(),
                limit_bytes: cap,
            })
        } else {
            None
        };
        if let Some(end) = stop {
            // SIGKILL to this child's pid only.
            let _ = child.kill();
            let _ = child.wait();
            let _ = tail.poll(cap, start.elapsed().as_secs_f64());
            break end;
        }
        std::thread::sleep(POLL);
    };
    let wall_secs = start.elapsed().as_secs_f64();
    if let Some(copy) = &opts.console_copy {
        std::fs::copy(&console, copy)
            .map_err(|e| VmError::io(format!("copying the console to {}", copy.display()), e))?;
    }
    let ready_wall_secs = tail
        .events
        .iter()
        .find(|(p, _)| *p == Progress::Ready)
        .map(|e| e.1);
    let mut case_wall_secs = Vec::new();
    for (p, t) in &tail.events {
        if let Progress::CaseEnd(i) = p {
            let began = tail
                .events
                .iter()
                .find(|(q, _)| *q == Progress::CaseBegin(*i))
                .map(|e| e.1);
            if let Some(b) = began {
                case_wall_secs.push((*i, t - b));
            }
        }
    }
    Ok(Boot {
        end,
        wall_secs,
        ready_wall_secs,
        case_wall_secs,
        results: tail.bytes,
        console_tail: tail_lines(&console, CONSOLE_TAIL_LINES),
        qemu_stderr: tail_lines(&qemu_err, 10),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_has_the_deterministic_machine() {
        let o = BootOptions {
            cmdline_extra: vec!["quiet".into()],
            ..BootOptions::default()
        };
        let c = command(
            Path::new("/q"),
            Path::new("/k"),
            Path::new("/i"),
            Path::new("/t/con,sole"),
            Path::new("/t/res"),
            &o,
        );
        let args: Vec<String> = c
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let line = args.join(" ");
        for want in [
            "-accel tcg",
            "-icount shift=0,sleep=off",
            "-cpu max,-erms,-fsrm",
            "-smp 1",
            "-m 3072M",
            "-nographic",
            "-no-reboot",
            "file,id=console,path=/t/con,,sole",
            "-serial chardev:console",
            "-serial chardev:results",
            "-kernel /k",
            "-initrd /i",
        ] {
            assert!(line.contains(want), "{want} not in {line}");
        }
        assert_eq!(args.last().unwrap(), "console=ttyS0 panic=-1 quiet");
        // ttyS0 is the console, ttyS1 the results: the order of -serial.
        assert!(line.find("chardev:console").unwrap() < line.find("chardev:results").unwrap());
    }

    #[test]
    fn console_tail_is_bounded_and_clean() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("c");
        let mut s = String::from("\u{1b}[2J\u{1b}[0mSeaBIOS\r\n");
        for i in 0..100 {
            s.push_str(&format!("[ {i}] line\r\n"));
        }
        std::fs::write(&p, s).unwrap();
        let t = tail_lines(&p, 3);
        assert_eq!(t, "[ 97] line\n[ 98] line\n[ 99] line");
        assert_eq!(strip_controls("\u{1b}[2J\u{1b}[0mSeaBIOS\r"), "SeaBIOS");
        assert_eq!(tail_lines(&d.path().join("absent"), 3), "");
    }

    #[test]
    fn results_tail_caps_and_times_progress() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("r");
        std::fs::write(
            &p,
            "BLKLAB-READY uptime_ms=1\nBLKLAB-CASE-BEGIN 0 a\nBLKLAB-CASE-E",
        )
        .unwrap();
        let mut t = ResultsTail {
            path: p.clone(),
            file: None,
            bytes: Vec::new(),
            scanned: 0,
            events: Vec::new(),
        };
        t.poll(1 << 20, 1.0).unwrap();
        assert_eq!(
            t.events,
            [(Progress::Ready, 1.0), (Progress::CaseBegin(0), 1.0)]
        );
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        f.write_all(b"ND 0 a status=0\n").unwrap();
        t.poll(1 << 20, 2.5).unwrap();
        assert_eq!(t.events[2], (Progress::CaseEnd(0), 2.5));
        f.write_all(&[b'x'; 100]).unwrap();
        assert!(t.poll(120, 3.0).is_err());
        assert_eq!(t.bytes.len(), 120);
    }

    /// A QEMU that never exits is killed at the limit and reported as
    /// timed out.
    #[test]
    fn overrun_kills_only_that_process_and_reports_timed_out() {
        let d = tempfile::tempdir().unwrap();
        // Stands in for a QEMU whose guest never powers off.
        let script = d.path().join("fake-qemu");
        std::fs::write(&script, "#!/bin/sh\nexec sleep 30\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let o = BootOptions {
            qemu: Some(script),
            wall_limit: Duration::from_millis(300),
            ..BootOptions::default()
        };
        let t0 = Instant::now();
        // Another test thread forking while the script was being written
        // can make exec fail with ETXTBSY for a moment.
        let b = (0..20)
            .find_map(
                |_| match boot(Path::new("/k"), Path::new("/i"), d.path(), &o) {
                    Err(VmError::Io { source, .. }) if source.raw_os_error() == Some(26) => {
                        std::thread::sleep(Duration::from_millis(50));
                        None
                    }
                    other => Some(other),
                },
            )
            .unwrap()
            .unwrap();
        assert_eq!(b.end, BootEnd::TimedOut { limit_secs: 0 });
        assert!(t0.elapsed() < Duration::from_secs(10));
        assert!(b.results.is_empty());
    }

    #[test]
    fn a_missing_qemu_is_an_exit_4_error() {
        let d = tempfile::tempdir().unwrap();
        let o = BootOptions {
            qemu: Some(d.path().join("no-such-qemu")),
            ..BootOptions::default()
        };
        let e = boot(Path::new("/k"), Path::new("/i"), d.path(), &o).unwrap_err();
        assert!(e.is_host_unsuitable(), "{e}");
        assert!(e.to_string().contains("qemu-system-x86"), "{e}");
    }
}

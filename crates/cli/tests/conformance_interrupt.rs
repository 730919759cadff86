//! `blklab conformance` interrupted by SIGINT while fio runs: it stops its fio,
//! removes every loop device, backing file and cgroup it made, and exits with
//! 128 + SIGINT. Needs root, fio and loop devices (`SKIP: <reason>` otherwise).

use std::process::Command;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal};

/// What is left on the host with this harness process's names.
fn leftovers(pid: u32) -> Vec<String> {
    let tag = format!("blklab-conformance-{pid}-");
    let mut out = Vec::new();
    for dir in [
        "/dev/shm",
        "/run",
        "/sys/fs/cgroup/blkio",
        "/sys/fs/cgroup/unified",
        "/sys/fs/cgroup",
    ] {
        if let Ok(rd) = std::fs::read_dir(dir) {
            for e in rd.flatten() {
                let n = e.file_name().to_string_lossy().to_string();
                if n.starts_with(&tag) {
                    out.push(format!("{dir}/{n}"));
                }
            }
        }
    }
    let l = Command::new("losetup")
        .arg("-a")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
        .unwrap_or_default();
    for line in l.lines() {
        if line.contains(&tag) {
            out.push(line.to_string());
        }
    }
    out
}

#[test]
fn conformance_sigint_cleans_up_everything() {
    let e = blklab_conformance::env::probe();
    let missing = e.missing_basics();
    if !missing.is_empty() {
        println!("SKIP: {}", missing.join("; "));
        return;
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_blklab"))
        .args(["conformance", "capped-qos-iocost-off", "--repeat", "1"])
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait until the harness has its file, loop device and group and runs fio.
    let t = Instant::now();
    loop {
        let has_child = Command::new("pgrep")
            .args(["-P", &pid.to_string()])
            .output()
            .map(|o| !o.stdout.is_empty())
            .unwrap_or(false);
        if has_child && leftovers(pid).len() >= 3 {
            break;
        }
        assert!(
            // generous: this waits for a condition, a loaded machine only delays it
            t.elapsed() < Duration::from_secs(180),
            "the harness never started fio in its group"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    // Ctrl-C, to our own child (not yet reaped, so the pid is still its)
    rustix::process::kill_process(Pid::from_child(&child), Signal::INT).expect("SIGINT");
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(130), "exit status {st}");
    assert!(
        leftovers(pid).is_empty(),
        "left behind: {:?}",
        leftovers(pid)
    );
}

//! A lab on the real host: a loop device (direct I/O) over a file on tmpfs,
//! a parent cgroup with child groups for fio jobs, and the fio processes
//! started in them. Everything is registered as it is made and removed in
//! Drop, so a failing test leaves nothing behind.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::shell::sh;

/// Where the cgroup v1 blkio hierarchy is mounted on the project's hosts.
pub const V1_BLKIO: &str = "/sys/fs/cgroup/blkio";

/// The io controller the lab's groups use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// cgroup v2 `io` (io.stat, io.max).
    V2,
    /// cgroup v1 `blkio` (blkio.throttle.*).
    V1,
}

/// What to build.
#[derive(Debug, Clone)]
pub struct LabSpec<'a> {
    /// Prefix of every name the lab creates (`{name}-{pid}`).
    pub name: &'a str,
    /// Size of the backing file.
    pub file_mib: u64,
    /// Fill the file with random data, so reads touch real pages; otherwise
    /// it is sparse.
    pub random_data: bool,
    /// Child groups under the lab's parent group ("a", "b").
    pub groups: &'a [&'a str],
    /// Use cgroup v1 blkio even where cgroup v2's io controller could be had.
    pub v1_only: bool,
}

/// The lab; see the module doc.
pub struct HostLab {
    file: PathBuf,
    loopdev: Option<String>,
    parent: Option<PathBuf>,
    groups: Vec<String>,
    pub layout: Layout,
    children: Vec<Child>,
}

impl Drop for HostLab {
    fn drop(&mut self) {
        self.kill_fio();
        if let Some(p) = &self.parent {
            // a cgroup whose last task just exited can be busy for a moment
            for _ in 0..50 {
                for g in &self.groups {
                    let _ = std::fs::remove_dir(p.join(g));
                }
                if std::fs::remove_dir(p).is_ok() || !p.exists() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        if let Some(l) = &self.loopdev {
            let _ = sh(&format!("losetup -d {l}"));
        }
        let _ = std::fs::remove_file(&self.file);
    }
}

/// The cgroup root to make the lab's groups in, and its layout. A hybrid
/// host whose `io` controller is held by v1 blkio gets one try at releasing
/// it (docs: real-kernel-lab.md): the hierarchy only dies when nothing
/// references it, and if `io` does not appear in v2 it is mounted back.
fn io_controller(v1_only: bool) -> Result<(Layout, PathBuf), String> {
    let v1 = Path::new(V1_BLKIO);
    if v1_only {
        return if v1.join("cgroup.procs").exists() {
            Ok((Layout::V1, v1.to_path_buf()))
        } else {
            Err(format!("no cgroup v1 blkio hierarchy at {V1_BLKIO}"))
        };
    }
    let unified = if Path::new("/sys/fs/cgroup/unified/cgroup.controllers").exists() {
        PathBuf::from("/sys/fs/cgroup/unified")
    } else {
        PathBuf::from("/sys/fs/cgroup")
    };
    let has_io = |p: &Path| {
        std::fs::read_to_string(p.join("cgroup.controllers"))
            .unwrap_or_default()
            .split_whitespace()
            .any(|c| c == "io")
    };
    if !has_io(&unified)
        && v1.join("cgroup.procs").exists()
        && sh(&format!("umount {V1_BLKIO}")).is_ok()
    {
        let t0 = Instant::now();
        while !has_io(&unified) && t0.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(100));
        }
        if !has_io(&unified) {
            sh(&format!("mount -t cgroup -o blkio cgroup {V1_BLKIO}"))?;
        }
    }
    if has_io(&unified) {
        let sc = unified.join("cgroup.subtree_control");
        let cur = std::fs::read_to_string(&sc).unwrap_or_default();
        if !cur.split_whitespace().any(|c| c == "io") {
            std::fs::write(&sc, "+io").map_err(|e| format!("{}: {e}", sc.display()))?;
        }
        return Ok((Layout::V2, unified));
    }
    if v1.join("cgroup.procs").exists() {
        return Ok((Layout::V1, v1.to_path_buf()));
    }
    Err("no io controller reachable (neither cgroup v2 io nor v1 blkio)".into())
}

impl HostLab {
    /// Build the lab; on an error, what was made is removed again.
    pub fn setup(spec: &LabSpec) -> Result<HostLab, String> {
        let pid = std::process::id();
        let mut lab = HostLab {
            file: PathBuf::from(format!("/dev/shm/{}-{pid}.img", spec.name)),
            loopdev: None,
            parent: None,
            groups: Vec::new(),
            layout: Layout::V1,
            children: Vec::new(),
        };
        if spec.random_data {
            sh(&format!(
                "dd if=/dev/urandom of={} bs=1M count={} status=none",
                lab.file.display(),
                spec.file_mib
            ))?;
        } else {
            std::fs::File::create(&lab.file)
                .and_then(|f| f.set_len(spec.file_mib << 20))
                .map_err(|e| format!("{}: {e}", lab.file.display()))?;
        }
        lab.loopdev = Some(sh(&format!(
            "losetup -f --show --direct-io=on {}",
            lab.file.display()
        ))?);
        let (layout, root) = io_controller(spec.v1_only)?;
        lab.layout = layout;
        let parent = root.join(format!("{}-{pid}", spec.name));
        std::fs::create_dir(&parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        lab.parent = Some(parent.clone());
        if layout == Layout::V2 && !spec.groups.is_empty() {
            std::fs::write(parent.join("cgroup.subtree_control"), "+io")
                .map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        for g in spec.groups {
            std::fs::create_dir(parent.join(g)).map_err(|e| format!("{g}: {e}"))?;
            lab.groups.push(g.to_string());
        }
        Ok(lab)
    }

    /// The loop device's path (`/dev/loopN`).
    pub fn dev_path(&self) -> &str {
        self.loopdev.as_deref().unwrap_or("")
    }

    /// The loop device's name (`loopN`).
    pub fn dev_name(&self) -> String {
        self.dev_path().trim_start_matches("/dev/").to_string()
    }

    /// The loop device's number, `MAJ:MIN`.
    pub fn devno(&self) -> Result<String, String> {
        let p = format!("/sys/class/block/{}/dev", self.dev_name());
        std::fs::read_to_string(&p)
            .map(|s| s.trim().to_string())
            .map_err(|e| format!("{p}: {e}"))
    }

    /// The directory of group `g` ("" is the lab's parent group).
    pub fn group_dir(&self, g: &str) -> PathBuf {
        let p = self.parent.clone().unwrap_or_default();
        if g.is_empty() {
            p
        } else {
            p.join(g)
        }
    }

    /// Group `g`'s path below the cgroup root, as traces name it
    /// (`/{name}-{pid}/g`; for "" the parent with a trailing `/`).
    pub fn rel(&self, g: &str) -> String {
        let p = self.parent.as_ref().and_then(|p| p.file_name());
        format!("/{}/{g}", p.unwrap_or_default().to_string_lossy())
    }

    /// Start fio in group `g` on the loop device with `args` (fio options,
    /// `--name=` first, without `--filename`, which is appended to the job):
    /// the shell moves itself into the group, then becomes fio, so every I/O
    /// is the group's.
    pub fn spawn_fio(&mut self, g: &str, args: &str) -> Result<(), String> {
        let cmd = format!(
            "echo $$ > {} && exec fio {args} --filename={}",
            self.group_dir(g).join("cgroup.procs").display(),
            self.dev_path()
        );
        let c = Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .stdin(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        self.children.push(c);
        Ok(())
    }

    /// Start fio's 4k random reads with direct I/O in group `g` (job named
    /// `g`) at `rate_iops` for `runtime_s`, its JSON written to `out`.
    pub fn spawn_randread(
        &mut self,
        g: &str,
        iodepth: u32,
        rate_iops: u32,
        runtime_s: u32,
        out: &Path,
    ) -> Result<(), String> {
        self.spawn_fio(
            g,
            &format!(
                "--name={g} --direct=1 --rw=randread --bs=4k --ioengine=libaio \
                 --iodepth={iodepth} --rate_iops={rate_iops} --time_based --runtime={runtime_s} \
                 --output-format=json --output={}",
                out.display()
            ),
        )
    }

    /// Wait for every fio started; an error if one failed.
    pub fn wait_fio(&mut self) -> Result<(), String> {
        for mut c in self.children.drain(..) {
            let st = c.wait().map_err(|e| e.to_string())?;
            if !st.success() {
                return Err(format!("fio failed: {st}"));
            }
        }
        Ok(())
    }

    /// Stop every fio still running.
    pub fn kill_fio(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.children.clear();
    }
}

/// The lab a test runs on, or None after printing `SKIP: <reason>` when the
/// host lacks something (`missing`) or the lab cannot be built.
pub fn lab_or_skip(
    missing: Option<String>,
    setup: impl FnOnce() -> Result<HostLab, String>,
) -> Option<HostLab> {
    if let Some(r) = missing {
        eprintln!("SKIP: {r}");
        return None;
    }
    match setup() {
        Ok(l) => Some(l),
        Err(e) => {
            eprintln!("SKIP: lab setup failed: {e}");
            None
        }
    }
}

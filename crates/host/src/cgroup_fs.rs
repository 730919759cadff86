//! Finding the cgroup hierarchy that holds the io controller and mapping the
//! blk tracer's cgroup ids to paths.
//!
//! The id the tracer records is `cgroup_id(bio_blkcg_css(bio)->cgroup)`, the
//! kernfs node id, which on 64-bit kernels is the inode number of the cgroup
//! directory. It belongs to the hierarchy where the io (blkio) controller is:
//! cgroup v2 normally, or a v1 `blkio` mount on hybrid hosts. The tracer's own
//! `blk_cgname` resolves ids against v2 only, so it prints wrong or no paths
//! when io is on v1; we therefore record ids and resolve them here.

use crate::account::CgroupNames;
use crate::events::CgRef;
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// io controller on cgroup v2 (mount point)
    V2(PathBuf),
    /// io controller in a cgroup v1 `blkio` hierarchy (mount point)
    V1Blkio(PathBuf),
}

impl Layout {
    pub fn root(&self) -> &Path {
        match self {
            Layout::V2(p) | Layout::V1Blkio(p) => p,
        }
    }
}

/// Mount points of cgroup2 and cgroup-v1-blkio from /proc/self/mountinfo.
pub fn cgroup_mounts() -> (Vec<PathBuf>, Vec<PathBuf>) {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let (mut v2, mut v1) = (Vec::new(), Vec::new());
    for line in text.lines() {
        // "<id> <parent> <maj:min> <root> <mountpoint> <opts> ... - <fstype> <src> <superopts>"
        let Some((pre, post)) = line.split_once(" - ") else {
            continue;
        };
        let mp = pre.split(' ').nth(4).unwrap_or("");
        let mut post_it = post.split(' ');
        let fstype = post_it.next().unwrap_or("");
        let superopts = post_it.nth(1).unwrap_or("");
        let mp = PathBuf::from(mp.replace("\\040", " "));
        if fstype == "cgroup2" {
            v2.push(mp);
        } else if fstype == "cgroup" && superopts.split(',').any(|o| o == "blkio") {
            v1.push(mp);
        }
    }
    (v2, v1)
}

/// Where the io controller lives: a v2 mount listing `io` in its
/// cgroup.controllers, else a v1 blkio mount, else (io not available) the v2 mount.
pub fn detect_layout() -> Option<Layout> {
    let (v2, v1) = cgroup_mounts();
    for m in &v2 {
        let ctrl = std::fs::read_to_string(m.join("cgroup.controllers")).unwrap_or_default();
        if ctrl.split_whitespace().any(|c| c == "io") {
            return Some(Layout::V2(m.clone()));
        }
    }
    if let Some(m) = v1.first() {
        return Some(Layout::V1Blkio(m.clone()));
    }
    v2.first().map(|m| Layout::V2(m.clone()))
}

/// id → path ("/a/b", relative to the hierarchy root) by walking the tree.
pub fn scan_ids(root: &Path) -> BTreeMap<u64, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![(root.to_path_buf(), "/".to_string())];
    while let Some((dir, rel)) = stack.pop() {
        if let Ok(md) = std::fs::metadata(&dir) {
            out.insert(md.ino(), rel.clone());
        }
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for ent in rd.flatten() {
            if ent.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                let name = ent.file_name().to_string_lossy().into_owned();
                let child = if rel == "/" {
                    format!("/{name}")
                } else {
                    format!("{rel}/{name}")
                };
                stack.push((ent.path(), child));
            }
        }
    }
    out
}

/// Resolves ids against a live hierarchy; rescans on a miss at most once a
/// second (cgroups created after start). Everything it resolved is kept in
/// `known` so a recording can store the table.
pub struct HostCgroupNames {
    root: Option<PathBuf>,
    pub known: BTreeMap<u64, String>,
    last_scan: Option<Instant>,
    /// names for `CgRef::Path` (from a `blk_cgname` parser)
    pub paths: Vec<String>,
}

impl HostCgroupNames {
    pub fn new(root: Option<PathBuf>) -> Self {
        let mut s = HostCgroupNames {
            root,
            known: BTreeMap::new(),
            last_scan: None,
            paths: Vec::new(),
        };
        s.rescan();
        s
    }
    fn rescan(&mut self) {
        if let Some(r) = &self.root {
            for (id, p) in scan_ids(r) {
                self.known.entry(id).or_insert(p);
            }
        }
        self.last_scan = Some(Instant::now());
    }
    pub fn resolve_id(&mut self, id: u64) -> Option<String> {
        if let Some(p) = self.known.get(&id) {
            return Some(p.clone());
        }
        if self
            .last_scan
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1))
        {
            self.rescan();
        }
        self.known.get(&id).cloned()
    }
}

impl CgroupNames for HostCgroupNames {
    fn name_of(&mut self, cg: CgRef) -> Option<String> {
        match cg {
            CgRef::None => Some("/".into()),
            CgRef::Id(id) => self.resolve_id(id),
            CgRef::Path(i) => self.paths.get(i as usize).cloned(),
        }
    }
}

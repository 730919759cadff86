//! The cgroup v2 tree the jobs run in. Each node keeps the io.* file contents
//! the scenario wrote (the kernel strings verbatim); the controllers parse the
//! files they own and keep their per-cgroup state in their own tables, indexed
//! by [`CgId`] the way the kernel keeps per-blkg policy data.

use std::collections::BTreeMap;

use crate::sim::kerr::{split_devno, KernelError};

/// Index of a cgroup in the tree; the root is 0.
pub type CgId = u32;

pub const ROOT: CgId = 0;

#[derive(Clone, Debug)]
pub struct Cgroup {
    /// "/" for the root, otherwise "/a/b".
    pub path: String,
    pub parent: Option<CgId>,
    pub children: Vec<CgId>,
    /// 0 for the root.
    pub level: u32,
    /// io.* files as written by the scenario, e.g. "io.max" -> "8:0 riops=100".
    /// Several lines (one per device) are kept joined by '\n'.
    pub files: BTreeMap<String, String>,
}

#[derive(Clone, Debug)]
pub struct CgroupTree {
    nodes: Vec<Cgroup>,
    /// Each node's index by its path: `ensure` looks every path and its
    /// prefixes up, and a scenario with a thousand cgroups made that
    /// quadratic in the node count (a walk of the list per look-up).
    by_path: BTreeMap<String, CgId>,
}

impl Default for CgroupTree {
    fn default() -> Self {
        Self::new()
    }
}

impl CgroupTree {
    pub fn new() -> CgroupTree {
        CgroupTree {
            nodes: vec![Cgroup {
                path: "/".into(),
                parent: None,
                children: Vec::new(),
                level: 0,
                files: BTreeMap::new(),
            }],
            by_path: BTreeMap::from([("/".to_string(), ROOT)]),
        }
    }

    /// Normalise a path: leading '/', no trailing '/', no empty components.
    pub fn normalize(path: &str) -> Result<String, String> {
        let mut out = String::new();
        for comp in path.split('/') {
            if comp.is_empty() {
                continue;
            }
            if comp == "." || comp == ".." {
                return Err(format!("cgroup path '{path}' must not contain '.' or '..'"));
            }
            if comp.contains(char::is_whitespace) {
                return Err(format!("cgroup path '{path}' contains white space"));
            }
            out.push('/');
            out.push_str(comp);
        }
        if out.is_empty() {
            out.push('/');
        }
        Ok(out)
    }

    /// Find or create (with all ancestors) the cgroup at `path`.
    pub fn ensure(&mut self, path: &str) -> Result<CgId, String> {
        let norm = Self::normalize(path)?;
        if let Some(id) = self.find(&norm) {
            return Ok(id);
        }
        let mut cur = crate::block::blk_cgroup::ROOT;
        let mut prefix = String::new();
        for comp in norm.split('/').filter(|c| !c.is_empty()) {
            prefix.push('/');
            prefix.push_str(comp);
            cur = match self.find(&prefix) {
                Some(id) => id,
                None => {
                    let id = self.nodes.len() as CgId;
                    let level = self.nodes[cur as usize].level + 1;
                    self.nodes.push(Cgroup {
                        path: prefix.clone(),
                        parent: Some(cur),
                        children: Vec::new(),
                        level,
                        files: BTreeMap::new(),
                    });
                    self.nodes[cur as usize].children.push(id);
                    self.by_path.insert(prefix.clone(), id);
                    id
                }
            };
        }
        Ok(cur)
    }

    pub fn find(&self, path: &str) -> Option<CgId> {
        let norm = Self::normalize(path).ok()?;
        self.by_path.get(&norm).copied()
    }

    pub fn get(&self, id: CgId) -> &Cgroup {
        &self.nodes[id as usize]
    }
    /// A node to change its files; its path stays (the tree indexes it).
    pub fn get_mut(&mut self, id: CgId) -> &mut Cgroup {
        &mut self.nodes[id as usize]
    }
    pub fn len(&self) -> usize {
        self.nodes.len()
    }
    pub fn is_empty(&self) -> bool {
        false
    }
    pub fn parent(&self, id: CgId) -> Option<CgId> {
        self.nodes[id as usize].parent
    }
    pub fn level(&self, id: CgId) -> u32 {
        self.nodes[id as usize].level
    }
    /// `id` and its ancestors, from `id` up to the root.
    pub fn ancestors(&self, id: CgId) -> impl Iterator<Item = CgId> + '_ {
        let mut cur = Some(id);
        std::iter::from_fn(move || {
            let c = cur?;
            cur = self.nodes[c as usize].parent;
            Some(c)
        })
    }
    /// All ids in creation order (parents before children).
    pub fn ids(&self) -> impl Iterator<Item = CgId> {
        0..self.nodes.len() as CgId
    }
    /// The file content, if the scenario wrote it.
    pub fn file(&self, id: CgId, name: &str) -> Option<&str> {
        self.nodes[id as usize].files.get(name).map(|s| s.as_str())
    }
    /// Append a line to a cgroup file (the scenario's writes, in order).
    pub fn write_file(&mut self, id: CgId, name: &str, content: &str) {
        let f = self.nodes[id as usize]
            .files
            .entry(name.to_string())
            .or_default();
        if !f.is_empty() {
            f.push('\n');
        }
        f.push_str(content);
    }
}

/// `BFQ_DEFAULT_GRP_WEIGHT`, `BFQ_MIN_WEIGHT`, `BFQ_MAX_WEIGHT`.
pub const BFQ_DEFAULT_GRP_WEIGHT: u32 = 100;
pub const BFQ_MIN_WEIGHT: u64 = 1;
pub const BFQ_MAX_WEIGHT: u64 = 1000;

/// One accepted write to `io.bfq.weight` (cgroup v2) or
/// `blkio.bfq.weight_device` (v1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BfqWeightWrite {
    /// The cgroup's default weight (`bfqgd->weight`).
    Default(u32),
    /// A per-device weight; 0 ("default") removes it (`entity.dev_weight`).
    Device { devno: (u32, u32), weight: u32 },
}

/// `simple_strtoull(s, &end, 0)`: the value of the leading digits (base
/// from a 0x or 0 prefix) and the rest of the string.
fn simple_strtoull(s: &str) -> (u64, &str) {
    let b = s.as_bytes();
    let (radix, mut i) = if b.first() == Some(&b'0') {
        if matches!(b.get(1), Some(b'x') | Some(b'X'))
            && b.get(2).is_some_and(|c| c.is_ascii_hexdigit())
        {
            (16, 2)
        } else {
            (8, 0)
        }
    } else {
        (10, 0)
    };
    let mut v: u64 = 0;
    while let Some(d) = b.get(i).and_then(|&c| (c as char).to_digit(radix)) {
        v = v.wrapping_mul(radix as u64).wrapping_add(d as u64);
        i += 1;
    }
    (v, &s[i..])
}

/// `sscanf(s, "%llu")`: leading white space, then decimal digits; the rest
/// is ignored. None when there is no digit.
fn scan_llu(s: &str) -> Option<u64> {
    let t = s.trim_start();
    let t = t.strip_prefix('+').unwrap_or(t);
    let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if end == 0 {
        return None;
    }
    Some(t[..end].parse::<u64>().unwrap_or(u64::MAX))
}

/// `bfq_io_set_weight_legacy`: a default weight, 1..1000, else ERANGE.
fn bfq_weight_in_range(v: u64) -> Result<u32, KernelError> {
    if !(BFQ_MIN_WEIGHT..=BFQ_MAX_WEIGHT).contains(&v) {
        return Err(KernelError::erange(format!(
            "bfq weight {v} is outside {BFQ_MIN_WEIGHT}..{BFQ_MAX_WEIGHT}"
        )));
    }
    Ok(v as u32)
}

/// Mirrors `bfq_io_set_weight` (block/bfq-cgroup.c), the write handler of
/// `io.bfq.weight`: `N` or `default N` sets the cgroup's default weight
/// (1..1000, else ERANGE); otherwise `MAJ:MIN N|default` goes through
/// `blkg_conf_prep` (EINVAL for a malformed device) and
/// `bfq_io_set_device_weight` (0 is ERANGE, a non-number EINVAL, out of
/// range ERANGE). Whether the device exists and runs bfq (ENODEV,
/// EOPNOTSUPP) is the caller's to check.
pub fn parse_bfq_weight(line: &str) -> Result<BfqWeightWrite, KernelError> {
    let buf = line.trim();
    let (v, rest) = simple_strtoull(buf);
    if rest.is_empty() {
        return bfq_weight_in_range(v).map(BfqWeightWrite::Default);
    }
    if let Some(after) = buf.strip_prefix("default") {
        if let Some(v) = scan_llu(after) {
            return bfq_weight_in_range(v).map(BfqWeightWrite::Default);
        }
    }
    // blkg_conf_open_bdev: "%u:%u" then white space.
    let bad_dev = || {
        KernelError::einval(format!(
            "'{buf}': expected 'default N', 'N' or 'MAJ:MIN N|default'"
        ))
    };
    let end = buf.find(char::is_whitespace).ok_or_else(bad_dev)?;
    let ((maj, min), _) = split_devno(&buf[..end]).map_err(|_| bad_dev())?;
    let body = buf[end..].trim();
    let v = match scan_llu(body) {
        Some(0) => {
            return Err(KernelError::erange(
                "bfq device weight 0: use 'default' to remove it",
            ))
        }
        Some(v) => v,
        None if body == "default" => 0,
        None => {
            return Err(KernelError::einval(format!(
                "'{body}' is not a weight or 'default'"
            )))
        }
    };
    let weight = if v == 0 { 0 } else { bfq_weight_in_range(v)? };
    Ok(BfqWeightWrite::Device {
        devno: (maj, min),
        weight,
    })
}

/// Mirrors `bfq_io_set_weight_legacy` behind cgroup v1's `write_u64`
/// (`kstrtoull(buf, 0)`: EINVAL if not a number), the handler of
/// `blkio.bfq.weight`.
pub fn parse_bfq_weight_legacy(line: &str) -> Result<u32, KernelError> {
    let t = line.trim();
    let (v, rest) = simple_strtoull(t);
    if t.is_empty() || !rest.is_empty() {
        return Err(KernelError::einval(format!("'{t}' is not a number")));
    }
    bfq_weight_in_range(v)
}

impl CgroupTree {
    /// The bfq weight of cgroup `id` on device `devno`, replaying the
    /// writes to `io.bfq.weight` and `blkio.bfq.weight` in order
    /// (`bfq_group_set_weight`: a device weight overrides the default).
    /// Lines that do not parse were rejected before the run and are skipped.
    pub fn bfq_weight(&self, id: CgId, devno: (u32, u32)) -> u32 {
        let mut default = BFQ_DEFAULT_GRP_WEIGHT;
        let mut dev = 0;
        for line in self
            .file(id, "io.bfq.weight")
            .into_iter()
            .flat_map(str::lines)
        {
            match parse_bfq_weight(line) {
                Ok(BfqWeightWrite::Default(w)) => default = w,
                Ok(BfqWeightWrite::Device { devno: d, weight }) if d == devno => dev = weight,
                _ => {}
            }
        }
        for line in self
            .file(id, "blkio.bfq.weight")
            .into_iter()
            .flat_map(str::lines)
        {
            if let Ok(w) = parse_bfq_weight_legacy(line) {
                default = w;
            }
        }
        if dev != 0 {
            dev
        } else {
            default
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn tree() {
        let mut t = CgroupTree::new();
        let b = t.ensure("/a/b").unwrap();
        let a = t.find("/a").unwrap();
        assert_eq!(t.parent(b), Some(a));
        assert_eq!(t.ancestors(b).collect::<Vec<_>>(), vec![b, a, ROOT]);
        assert_eq!(t.ensure("a/b/").unwrap(), b);
        assert_eq!(t.level(b), 2);
        assert!(t.ensure("/a/../b").is_err());
        assert_eq!(CgroupTree::normalize("").unwrap(), "/");
    }

    #[test]
    fn bfq_weight_writes() {
        use crate::sim::kerr::Errno;
        let d = |l: &str| parse_bfq_weight(l);
        assert_eq!(d("800").unwrap(), BfqWeightWrite::Default(800));
        assert_eq!(d("default 100\n").unwrap(), BfqWeightWrite::Default(100));
        assert_eq!(d("0x10").unwrap(), BfqWeightWrite::Default(16));
        assert_eq!(
            d("259:0 300").unwrap(),
            BfqWeightWrite::Device {
                devno: (259, 0),
                weight: 300
            }
        );
        assert_eq!(
            d("259:0 default").unwrap(),
            BfqWeightWrite::Device {
                devno: (259, 0),
                weight: 0
            }
        );
        for (bad, errno) in [
            ("0", Errno::Erange),
            ("1001", Errno::Erange),
            ("default 0", Errno::Erange),
            ("default 5000", Errno::Erange),
            ("259:0 0", Errno::Erange),
            ("259:0 1001", Errno::Erange),
            ("259:0 heavy", Errno::Einval),
            ("sda 100", Errno::Einval),
            ("default", Errno::Einval),
            ("10 apples", Errno::Einval),
        ] {
            assert_eq!(d(bad).unwrap_err().errno, errno, "{bad}");
        }
        assert_eq!(parse_bfq_weight_legacy("500\n").unwrap(), 500);
        assert_eq!(
            parse_bfq_weight_legacy("0").unwrap_err().errno,
            Errno::Erange
        );
        assert_eq!(
            parse_bfq_weight_legacy("five").unwrap_err().errno,
            Errno::Einval
        );
        let mut t = CgroupTree::new();
        let a = t.ensure("/a").unwrap();
        assert_eq!(t.bfq_weight(a, (8, 0)), BFQ_DEFAULT_GRP_WEIGHT);
        t.write_file(a, "io.bfq.weight", "default 800");
        t.write_file(a, "io.bfq.weight", "8:16 50");
        assert_eq!(t.bfq_weight(a, (8, 0)), 800);
        assert_eq!(t.bfq_weight(a, (8, 16)), 50);
        t.write_file(a, "io.bfq.weight", "8:16 default");
        assert_eq!(t.bfq_weight(a, (8, 16)), 800);
    }
}

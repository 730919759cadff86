//! The cgroup v2 tree the jobs run in. Each node keeps the io.* file contents
//! the scenario wrote (the kernel strings verbatim); the controllers parse the
//! files they own and keep their per-cgroup state in their own tables, indexed
//! by [`CgId`] the way the kernel keeps per-blkg policy data.

use std::collections::BTreeMap;

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
                    id
                }
            };
        }
        Ok(cur)
    }

    pub fn find(&self, path: &str) -> Option<CgId> {
        let norm = Self::normalize(path).ok()?;
        self.nodes
            .iter()
            .position(|n| n.path == norm)
            .map(|i| i as CgId)
    }

    pub fn get(&self, id: CgId) -> &Cgroup {
        &self.nodes[id as usize]
    }
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
}

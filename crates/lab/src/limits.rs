//! The limits of a scenario (docs/scenario.md, "Limits"): how many devices,
//! cgroups and job instances, how long a run, how long a name. Each is
//! checked before the memory or time it stands for is spent, with an error
//! that names the limit. File sizes and line lengths are blklab-input's.

use blklab_core::block::blk_cgroup::CgroupTree;
use blklab_core::drivers::DeviceInfo;
use blklab_core::sim::time::{Ns, NSEC_PER_SEC};

/// Devices in one scenario.
pub const MAX_DEVICES: usize = 64;
/// Cgroups in one scenario, the root and every ancestor included.
pub const MAX_CGROUPS: usize = 4096;
/// Levels below the root of a cgroup path.
pub const MAX_CGROUP_DEPTH: usize = 32;
/// Job instances (every numjobs clone of every job) in one scenario; the
/// fio parser has the same cap per fio input (`blklab_fio::parse::MAX_JOBS`).
pub const MAX_JOB_INSTANCES: usize = blklab_fio::parse::MAX_JOBS;
/// Bytes of a label or fio job name (fio's section names are shorter still).
pub const MAX_NAME_BYTES: usize = 255;
/// Simulated time: `run.duration` and a write's `at`.
pub const MAX_DURATION_NS: Ns = 86_400 * NSEC_PER_SEC;
/// The host CPU costs (`submit_ns`, `reap_ns`, `wake_jitter_ns`).
pub const MAX_HOST_NS: u64 = NSEC_PER_SEC;
/// `BLK_MQ_MAX_DEPTH`: the deepest tag set blk-mq allocates.
pub const BLK_MQ_MAX_DEPTH: u32 = 10240;
/// Hardware queues of one device (nr_cpu_ids on a large machine).
pub const MAX_HW_QUEUES: u32 = 1024;
/// Largest `max_sectors_kb` (the block layer's `max_hw_sectors` is an
/// unsigned int of sectors: 2^32 sectors of 512 bytes, in KiB, less one).
pub const MAX_SECTORS_KB: u32 = (u32::MAX >> 1) - 1;

/// A cgroup path as a scenario writes it: absolute ("/a/b"; "/a/" is "/a",
/// as the kernel's paths are), at most `MAX_CGROUP_DEPTH` levels. Returns
/// the normalised path.
pub fn cgroup_path(path: &str) -> Result<String, String> {
    if !path.starts_with('/') {
        return Err(format!(
            "cgroup path '{}' is relative: write it from the cgroup root, as \"/{}\"",
            blklab_input::excerpt(path),
            blklab_input::excerpt(path)
        ));
    }
    let norm = CgroupTree::normalize(path)?;
    let depth = norm.split('/').filter(|c| !c.is_empty()).count();
    if depth > MAX_CGROUP_DEPTH {
        return Err(format!(
            "cgroup path '{}' is {depth} levels deep; at most {MAX_CGROUP_DEPTH}",
            blklab_input::excerpt(path)
        ));
    }
    Ok(norm)
}

/// `tree.ensure(path)` for a checked path, refused when it would take the
/// tree past `MAX_CGROUPS`.
pub fn ensure_cgroup(tree: &mut CgroupTree, path: &str) -> Result<u32, String> {
    let norm = cgroup_path(path)?;
    if let Some(id) = tree.find(&norm) {
        return Ok(id);
    }
    // the new nodes: the path and its ancestors not in the tree yet
    let mut new = 0;
    let mut prefix = String::new();
    for comp in norm.split('/').filter(|c| !c.is_empty()) {
        prefix.push('/');
        prefix.push_str(comp);
        if tree.find(&prefix).is_none() {
            new += 1;
        }
    }
    if tree.len() + new > MAX_CGROUPS {
        return Err(format!(
            "cgroup {}: more than {MAX_CGROUPS} cgroups in one scenario",
            blklab_input::excerpt(&norm)
        ));
    }
    tree.ensure(&norm)
}

/// A host CPU cost in ns: at most `MAX_HOST_NS`.
pub fn host_ns(key: &str, v: u64) -> Result<u64, String> {
    if v > MAX_HOST_NS {
        return Err(format!(
            "{key} = {v}: at most {MAX_HOST_NS} (1 s; a host that slow is not a host)"
        ));
    }
    Ok(v)
}

/// A simulated instant or duration: at most `MAX_DURATION_NS`.
pub fn duration(what: &str, v: Ns) -> Result<Ns, String> {
    if v > MAX_DURATION_NS {
        return Err(format!(
            "{what} of {}s: at most {}s (one simulated day)",
            v / NSEC_PER_SEC,
            MAX_DURATION_NS / NSEC_PER_SEC
        ));
    }
    Ok(v)
}

/// A label or job name: at most `MAX_NAME_BYTES`.
pub fn name(what: &str, s: &str) -> Result<(), String> {
    if s.len() > MAX_NAME_BYTES {
        return Err(format!(
            "{what} '{}' is {} bytes long; at most {MAX_NAME_BYTES}",
            blklab_input::excerpt(s),
            s.len()
        ));
    }
    Ok(())
}

/// The queue limits a device's driver and the block layer would refuse.
/// Mirrors `blk_mq_alloc_tag_set` (no hardware queue, or a tag set deeper
/// than `BLK_MQ_MAX_DEPTH`) and `queue_max_sectors_store` (max_sectors_kb
/// below the page size in KiB), with their errno.
pub fn device_queue(info: &DeviceInfo) -> Result<(), String> {
    let n = &info.name;
    if info.nr_hw_queues == 0 {
        return Err(format!(
            "device {n}: nr_hw_queues = 0: a tag set needs at least one hardware queue (EINVAL)"
        ));
    }
    for (key, v, max, why) in [
        ("nr_hw_queues", info.nr_hw_queues, MAX_HW_QUEUES, ""),
        (
            "queue_depth",
            info.queue_depth,
            BLK_MQ_MAX_DEPTH,
            " (BLK_MQ_MAX_DEPTH)",
        ),
        (
            "nr_requests",
            info.nr_requests,
            BLK_MQ_MAX_DEPTH,
            " (BLK_MQ_MAX_DEPTH)",
        ),
    ] {
        if v > max {
            return Err(format!("device {n}: {key} = {v}: at most {max}{why}"));
        }
    }
    let page_kb = (blklab_core::mm::PAGE_SIZE >> 10) as u32;
    if info.max_sectors_kb < page_kb {
        return Err(format!(
            "device {n}: max_sectors_kb = {}: at least the page size, {page_kb} (EINVAL)",
            info.max_sectors_kb
        ));
    }
    if info.max_sectors_kb > MAX_SECTORS_KB {
        return Err(format!(
            "device {n}: max_sectors_kb = {}: at most {MAX_SECTORS_KB} (EINVAL)",
            info.max_sectors_kb
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cgroup_paths() {
        assert_eq!(cgroup_path("/a/").unwrap(), "/a");
        assert_eq!(cgroup_path("/").unwrap(), "/");
        assert!(cgroup_path("a").unwrap_err().contains("relative"));
        let deep = "/x".repeat(MAX_CGROUP_DEPTH + 1);
        assert!(cgroup_path(&deep).unwrap_err().contains("levels deep"));
        assert!(cgroup_path(&"/x".repeat(MAX_CGROUP_DEPTH)).is_ok());
    }

    #[test]
    fn cgroup_count_is_checked_before_the_tree_grows() {
        let mut t = CgroupTree::new();
        for i in 0..MAX_CGROUPS - 1 {
            ensure_cgroup(&mut t, &format!("/c{i}")).unwrap();
        }
        assert_eq!(t.len(), MAX_CGROUPS);
        assert!(ensure_cgroup(&mut t, "/c1").is_ok());
        let e = ensure_cgroup(&mut t, "/new").unwrap_err();
        assert!(e.contains("more than 4096"), "{e}");
        assert_eq!(t.len(), MAX_CGROUPS);
    }

    #[test]
    fn numbers() {
        assert!(host_ns("wake_jitter_ns", 1_000_000_000).is_ok());
        assert!(host_ns("wake_jitter_ns", 1_000_000_000_000_000_000).is_err());
        assert!(duration("run.duration", MAX_DURATION_NS + 1).is_err());
        assert!(name("label", &"x".repeat(255)).is_ok());
        assert!(name("label", &"x".repeat(65518))
            .unwrap_err()
            .contains("65518 bytes"));
    }
}

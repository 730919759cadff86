//! What the unit tests of several subsystems build alike: a device's queue
//! limits and a cgroup tree with files written.

use crate::block::blk_cgroup::CgroupTree;
use crate::block::disk::DeviceInfo;

/// A non-rotational blk-mq device `name` (MAJ:MIN) with a single hardware
/// queue, 64 tags and 64 driver slots, 128 KiB requests, 512-byte blocks and
/// 1 TiB; tests change what they exercise with struct-update syntax.
pub(crate) fn device(name: &str, major: u32, minor: u32) -> DeviceInfo {
    DeviceInfo {
        name: name.into(),
        major,
        minor,
        rotational: false,
        nr_requests: 64,
        queue_depth: 64,
        nr_hw_queues: 1,
        max_sectors_kb: 128,
        logical_block_size: 512,
        capacity_bytes: 1 << 40,
    }
}

/// A cgroup tree with `(path, file, content)` written in order, creating
/// each path's groups as `mkdir -p` would.
pub(crate) fn tree_with(files: &[(&str, &str, &str)]) -> CgroupTree {
    let mut t = CgroupTree::new();
    for (path, file, content) in files {
        let id = t.ensure(path).unwrap();
        t.write_file(id, file, content);
    }
    t
}

/// The context the block layer hands a controller at `now`, at HZ=1000.
pub(crate) fn ctx<'a>(
    now: crate::sim::time::Ns,
    dev: &'a DeviceInfo,
    cgroups: &'a CgroupTree,
    switches: &'a crate::sim::switches::Switches,
    trace: &'a mut crate::sim::trace::Tracer,
) -> crate::block::ctx::Ctx<'a> {
    crate::block::ctx::Ctx {
        now,
        hz: crate::sim::time::Hz(1000),
        dev,
        cgroups,
        switches,
        trace,
        timer_moved: true,
    }
}

/// A request of one bio (`bio`) just allocated and inserted at `now`:
/// sync if it is a read, no issue or completion yet.
pub(crate) fn request(
    op: crate::block::bio::Op,
    cg: crate::block::blk_cgroup::CgId,
    ioprio: crate::block::ioprio::Ioprio,
    sector: u64,
    sectors: u64,
    bio: crate::block::bio::BioId,
    now: crate::sim::time::Ns,
) -> crate::block::request::Request {
    crate::block::request::Request {
        dev: 0,
        op,
        cg,
        submitter: Default::default(),
        ioprio,
        sector,
        bytes: (sectors << 9) as u32,
        sync: op == crate::block::bio::Op::Read,
        bios: smallvec::smallvec![bio],
        alloc_time: now,
        start_time: now,
        insert_time: now,
        issue_time: 0,
        fifo_time: 0,
        done_time: 0,
        wbt_acct: 0,
        tag: 0,
    }
}

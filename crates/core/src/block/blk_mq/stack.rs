//! Stacked block devices: a device whose driver sends its I/O on to another
//! device of the same machine, which has its own queue, limits, blk-throttle
//! and rq_qos chain. Two shapes, as in the kernel:
//!
//! * request-based (a loop device over a block device): the upper device's
//!   request is dispatched to the driver, which issues a bio for the same
//!   bytes on the lower device; the request completes when that bio ends
//!   (`drivers::loop_dev`).
//! * bio-based (device-mapper dm-linear): the upper device has no request
//!   queue; after blk-throttle its bio is cloned, remapped and submitted to
//!   the lower device, and ends when the clone ends (`drivers::dm_linear`).
//!
//! The path here is the block layer's side of both (`Lower` in `disk.rs`
//! names the device below); the drivers' files hold their set-up.

use super::BlkMq;
use crate::block::bio::{Bio, BioFlags, BioId, DevId, Origin};
use crate::block::ioprio::Ioprio;
use crate::block::request::ReqId;

/// The origin a submitter is told about: a device-mapper clone stands for
/// its parent bio, whose submitter waits in the same `submit_bio` call
/// (`dm_submit_bio` runs in the submitter's context).
pub(crate) fn submitter_origin(bios: &crate::sim::slab::Slab<Bio>, mut o: Origin) -> Origin {
    while let Origin::Clone { parent } = o {
        o = bios.get(parent).origin;
    }
    o
}

/// Mirrors `loop_queue_rq` → `loop_queue_work` → `loop_process_work` →
/// `loop_handle_cmd` → `lo_rw_aio` (drivers/block/loop.c): the loop device
/// dispatched request `rid`; its worker issues one direct-I/O bio for the
/// same bytes on the backing device. Since v5.12 loop keeps a worker per
/// blkcg and runs it associated with the request's blkcg
/// (`cmd->blkcg_css`, `kthread_associate_blkcg`), so the lower bio is
/// charged to the original submitter's cgroup by every controller of the
/// lower device. The direct-I/O write flags are `dio_bio_write_op`'s
/// (REQ_SYNC | REQ_IDLE); the ioprio is the cgroup's blk-ioprio policy
/// applied to none, as `lo_rw_aio` sets `ki_ioprio` to IOPRIO_CLASS_NONE
/// up to v6.14. Not modelled: v6.15's 1fdb8188c3d5 ("loop: aio inherit the
/// ioprio of original request"), which passes the request's ioprio down.
///
/// Simplified: the worker issues at the dispatch instant (no worker
/// scheduling delay; the device's `idle_wake_ns` stays the submitter's cost
/// of waking it), and it never blocks on the lower device: a bio that waits
/// there for a tag or an rq_qos budget does not hold up the worker's next
/// commands (`lo_rw_aio` would sleep in `submit_bio` for those). The bio
/// is split to the lower device's limits by the lower queue, not by
/// `__blkdev_direct_IO`'s BIO_MAX_VECS.
pub(crate) fn loop_queue_rq<H: BlkMq + ?Sized>(h: &mut H, dev: DevId, rid: ReqId, lower: DevId) {
    let b = h.blk();
    let rq = b.reqs.get(rid);
    let write = rq.op.is_write();
    let mut bio = Bio::new(
        lower,
        rq.cg,
        rq.op,
        rq.sector,
        rq.bytes,
        Origin::Stacked { dev, rq: rid },
    );
    bio.flags = BioFlags {
        sync: write,
        idle: write,
        ..Default::default()
    };
    bio.ioprio = b
        .blk_ioprio
        .bio_set_ioprio(rq.cg, Ioprio::default(), Ioprio::default());
    let id = b.bios.insert(bio);
    // the worker's submission, not the task's: no submit call is charged
    let task_call = b.submit_cpu_ns.take();
    h.submit_bio(id);
    h.blk().submit_cpu_ns = task_call;
}

/// Mirrors `lo_rw_aio_complete` → `lo_rw_aio_do_completion` →
/// `blk_mq_complete_request` → `lo_complete_rq` → `blk_mq_end_request`
/// (drivers/block/loop.c, block/blk-mq.c): the lower bio of loop request
/// `rid` ended, the loop request completes, in the same context and at
/// once: `blk_mq_complete_request_remote` completes locally a request whose
/// hardware context maps one software context on this CPU (v6.1 on; a
/// loop device's one queue on a one-CPU machine), so the task waiting for
/// it is woken inside the lower completion, before whoever ran it (the
/// lower loop device's worker) can sleep. The upper request completes
/// inside the lower one's completion, before the lower tag is freed, as
/// `blk_mq_end_request` ends the bios before freeing the request.
///
/// Simplified: locally on every host (with more CPUs the kernel completes
/// on the submitting CPU through an IPI when it is another one); no
/// interrupt cost (`irq_ns`) is charged, the completing context's time
/// holds it.
pub(crate) fn loop_rw_aio_complete<H: BlkMq + ?Sized>(h: &mut H, dev: DevId, rid: ReqId) {
    let now = h.now();
    h.blk().reqs.get_mut(rid).done_time = now;
    h.complete_request(dev, rid);
}

/// Mirrors `dm_submit_bio` → `dm_split_and_process_bio` → `__map_bio` with
/// `linear_map` (drivers/md/dm.c, dm-linear.c): bio `id` of bio-based
/// device `dev`, past blk-throttle, is accounted on `dev`
/// (`dm_start_io_acct` → `bio_start_io_acct`), cloned, remapped to
/// `start + sector` of the lower device and submitted there
/// (`dm_submit_bio_remap` → `submit_bio_noacct`, which runs the lower
/// device's blk-throttle). The clone keeps the original blkg
/// (`bio_clone_blkg_association`) and ioprio; a waiting submitter is told
/// when the clone is queued below (it runs in the same call).
pub(crate) fn dm_submit_bio<H: BlkMq + ?Sized>(h: &mut H, id: BioId, lower: DevId, start: u64) {
    let now = h.now();
    let b = h.blk();
    let bio = b.bios.get_mut(id);
    let waits = std::mem::replace(&mut bio.flags.submitter_waits, false);
    let mut clone = bio.clone();
    let dev = bio.dev;
    b.devs[dev as usize].st.diskstats.start(now, bio.op);
    clone.dev = lower;
    clone.sector += start;
    clone.origin = Origin::Clone { parent: id };
    clone.flags = BioFlags {
        throttled: false,
        qos_throttled: false,
        submitter_waits: waits,
        ..clone.flags
    };
    clone.pending_frags = 1;
    let cid = b.bios.insert(clone);
    h.submit_bio(cid);
}

/// Mirrors `clone_endio` → `dm_io_dec_pending` → `dm_io_complete`
/// (`dm_end_io_acct` → `bio_end_io_acct`, then `bio_endio` of the
/// original): the clone of bio `parent` ended.
pub(crate) fn dm_clone_endio<H: BlkMq + ?Sized>(h: &mut H, parent: BioId) {
    let now = h.now();
    let b = h.blk();
    let bio = b.bios.remove(parent);
    let st = &mut b.devs[bio.dev as usize].st;
    st.diskstats.done(now, bio.op, bio.sectors(), bio.t_queue);
    st.bios_done += 1;
    h.end_origin(bio.origin);
}

//! The loop driver (drivers/block/loop.c) over a block device of the same
//! machine, with direct I/O (`LO_FLAGS_DIRECT_IO`, `losetup --direct-io=on`):
//! a request-based (blk-mq) device whose requests are carried out by bios on
//! the backing device. The block layer's side (`loop_queue_rq`, `lo_rw_aio`,
//! `lo_rw_aio_complete`) is in `block/blk_mq/stack.rs`.
//!
//! Parameters (the TOML keys of `[device.model]` with `kind = "loop"`):
//! * `backend`: the name of the scenario device the loop device is bound to
//!   (`losetup /dev/loopN /dev/BACKEND`); or
//! * `backing = "tmpfs"`: the loop device is bound to a file in memory (a
//!   tmpfs file, `losetup /dev/loopN /dev/shm/FILE`); or
//! * `backing = "file"`: bound to a file on a disk file system, without
//!   direct I/O (`losetup`'s default), whose pages are in the page cache:
//!   the worker's buffered read or write (`lo_read_simple` /
//!   `lo_write_simple` → the file's read_iter/write_iter) is a copy to or
//!   from cached pages, as over tmpfs; exactly one of `backend`/`backing`.
//!   Simplified: the file's pages never leave the cache and its dirty pages
//!   are never written back (the writeback of the disk below, dirty
//!   throttling in `balance_dirty_pages`, reads that miss the cache are not
//!   modelled): a file that fits in memory, for runs shorter than the
//!   writeback interval's effects.
//! * `worker_ns`: CPU time of the loop worker per request (the work item's
//!   `loop_handle_cmd`: building the iov_iter and the kiocb, calling the
//!   file's read_iter/write_iter); 0 by default.
//! * `worker_ns_per_kib`: the worker's copy cost per KiB, for a file in
//!   memory only (the read or write is a synchronous copy to or from the
//!   page cache pages of the file); 0 by default.
//! * `worker_write_ns`, `worker_write_ns_per_kib`: a write's costs, for a
//!   file whose write path costs more than its read path (ext4's buffered
//!   write takes the inode lock, allocates and dirties the page and its
//!   buffer heads); the read costs by default.
//!
//! The worker (`drivers::loop_worker`) runs only for a loop over a file,
//! or over a device when `worker_ns` > 0; a loop over a device with no
//! worker cost passes its requests below at dispatch, as before.
//!
//! The queue: `loop_add` makes a tag set of `hw_queue_depth` (module
//! parameter, default 128) requests on one hardware queue, with
//! BLK_MQ_F_NO_SCHED_BY_DEFAULT, so the device starts with scheduler "none"
//! (the scenario's default too); a scheduler may be chosen, as on the host.
//! The capacity is the backing device's (`get_size` with no offset or
//! sizelimit), unless the scenario says otherwise.
//!
//! Not modelled: the page cache's misses and writeback for a file on a disk
//! file system (above), buffered (non-direct) loop I/O over a device,
//! `lo_offset`.

use serde::Deserialize;

use super::DeviceModel;
use crate::block::bio::Op;
use crate::sim::time::Ns;

/// loop.c's `hw_queue_depth` module parameter default.
pub const LOOP_HW_QUEUE_DEPTH: u32 = 128;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopSpec {
    /// The scenario device the loop device's I/O goes to.
    #[serde(default)]
    pub backend: Option<String>,
    /// A backing file that is not a scenario device: "tmpfs" (a file in
    /// memory) or "file" (a cached file on a disk file system).
    #[serde(default)]
    pub backing: Option<String>,
    /// The worker's CPU time per request, ns.
    #[serde(default)]
    pub worker_ns: i64,
    /// The worker's copy cost per KiB (a backing file only), ns.
    #[serde(default)]
    pub worker_ns_per_kib: i64,
    /// A write's CPU time per request, ns (default: `worker_ns`).
    #[serde(default)]
    pub worker_write_ns: Option<i64>,
    /// A write's copy cost per KiB, ns (default: `worker_ns_per_kib`).
    #[serde(default)]
    pub worker_write_ns_per_kib: Option<i64>,
}

/// The backing files a loop device may name (`backing = "..."`).
pub const BACKINGS: [&str; 2] = ["tmpfs", "file"];

/// The most a loop worker may be told to spend on one request or one KiB
/// (1 s): beyond that a scenario is surely mistaken.
pub const MAX_WORKER_NS: i64 = 1_000_000_000;

pub use crate::block::disk::LoopWorkerCost;

impl LoopSpec {
    /// The loop over device `name` with no worker cost (as before workers).
    pub fn over(name: &str) -> LoopSpec {
        LoopSpec {
            backend: Some(name.into()),
            ..LoopSpec::default()
        }
    }

    /// Checked: exactly one of `backend`/`backing`, a known backing, the
    /// costs within 0..=MAX_WORKER_NS, no per-KiB cost over a device.
    pub fn check(&self) -> Result<(), String> {
        match (&self.backend, &self.backing) {
            (Some(_), Some(_)) => {
                return Err("backend and backing: give one of them, not both (a loop device is bound to one file)".into())
            }
            (None, None) => {
                return Err("backend or backing: expected the name of another device (backend = \"NAME\") or a file (backing = \"tmpfs\" or \"file\")".into())
            }
            (Some(b), None) if b.is_empty() => {
                return Err("backend: expected the name of another device".into())
            }
            (None, Some(f)) if !BACKINGS.contains(&f.as_str()) => {
                return Err(format!("backing \"{f}\": unknown; expected \"tmpfs\" (a file in memory) or \"file\" (a cached file on a disk file system)"))
            }
            _ => {}
        }
        for (key, v) in [
            ("worker_ns", self.worker_ns),
            ("worker_ns_per_kib", self.worker_ns_per_kib),
            ("worker_write_ns", self.worker_write_ns.unwrap_or(0)),
            (
                "worker_write_ns_per_kib",
                self.worker_write_ns_per_kib.unwrap_or(0),
            ),
        ] {
            if !(0..=MAX_WORKER_NS).contains(&v) {
                return Err(format!(
                    "{key} = {v}: expected 0 to {MAX_WORKER_NS} (ns of CPU time)"
                ));
            }
        }
        if self.backend.is_some() {
            for (key, set) in [
                ("worker_ns_per_kib", self.worker_ns_per_kib != 0),
                ("worker_write_ns", self.worker_write_ns.is_some()),
                (
                    "worker_write_ns_per_kib",
                    self.worker_write_ns_per_kib.is_some(),
                ),
            ] {
                if set {
                    return Err(format!("{key}: only for a backing file (backing = \"tmpfs\" or \"file\"); direct I/O to a device copies nothing"));
                }
            }
        }
        Ok(())
    }

    /// The worker's costs, when the loop device has a worker: always over
    /// a file in memory, over a device only with a CPU cost.
    pub fn worker(&self) -> Option<LoopWorkerCost> {
        let file_in_memory = self.backing.is_some();
        if !file_in_memory && self.worker_ns == 0 {
            return None;
        }
        let worker_ns = self.worker_ns.max(0) as Ns;
        let worker_ns_per_kib = self.worker_ns_per_kib.max(0) as Ns;
        Some(LoopWorkerCost {
            worker_ns,
            worker_ns_per_kib,
            worker_write_ns: self.worker_write_ns.map_or(worker_ns, |v| v.max(0) as Ns),
            worker_write_ns_per_kib: self
                .worker_write_ns_per_kib
                .map_or(worker_ns_per_kib, |v| v.max(0) as Ns),
            file_in_memory,
        })
    }
}

/// The loop device as a model: it never decides a completion itself (the
/// block layer sends its requests on to the backing device); it only gives
/// the driver's queue depth and its description.
pub struct Loop {
    spec: LoopSpec,
}

impl Loop {
    pub fn new(s: &LoopSpec) -> Result<Loop, String> {
        s.check()?;
        Ok(Loop { spec: s.clone() })
    }
}

impl DeviceModel for Loop {
    fn kind(&self) -> &'static str {
        "loop"
    }
    fn default_queue_depth(&self) -> u32 {
        LOOP_HW_QUEUE_DEPTH
    }
    /// Not reached: a loop device's requests go to its worker or its
    /// backing device (`block::blk_mq::run_queue`); completing at once
    /// keeps the contract.
    fn issue(&mut self, now: Ns, _op: Op, _sector: u64, _bytes: u32) -> Ns {
        debug_assert!(false, "a loop device's request reached its model");
        now
    }
    fn describe(&self) -> String {
        let s = &self.spec;
        let mut d = match (&s.backend, &s.backing) {
            (Some(b), _) => format!("loop backend={b} (direct I/O)"),
            (None, Some(f)) if f == "file" => {
                "loop backing=file (buffered, its pages cached)".into()
            }
            (None, f) => format!("loop backing={} (direct I/O)", f.as_deref().unwrap_or("")),
        };
        if s.worker_ns != 0 || s.worker_ns_per_kib != 0 {
            d += &format!(
                " worker_ns={} worker_ns_per_kib={}",
                s.worker_ns, s.worker_ns_per_kib
            );
        }
        if let Some(v) = s.worker_write_ns {
            d += &format!(" worker_write_ns={v}");
        }
        if let Some(v) = s.worker_write_ns_per_kib {
            d += &format!(" worker_write_ns_per_kib={v}");
        }
        d
    }
}
